#include "core/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace infersim {
namespace {

TEST(StudentT, QuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.7764, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.2622, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0423, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.95996, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.5, 7), 0, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.05, 10), -1.8125, 1e-4);
}

TEST(MeanCi95, UsesTheSampleDeviationAndT) {
  const MeanCi m = mean_ci95({1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(m.mean, 3);
  // sd = sqrt(2.5), t(0.975, 4) = 2.776445
  EXPECT_NEAR(*m.half_width, 2.776445 * std::sqrt(2.5) / std::sqrt(5.0), 1e-5);
}

TEST(MeanCi95, OneValueHasNoInterval) {
  const MeanCi m = mean_ci95({7});
  EXPECT_DOUBLE_EQ(m.mean, 7);
  EXPECT_FALSE(m.half_width.has_value());
}

}  // namespace
}  // namespace infersim
