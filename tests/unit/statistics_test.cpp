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

// Exact values, independently: df = 1 is Cauchy's, t = tan(pi (q - 1/2)); df =
// 2 has t = (2q - 1) / sqrt(2 q (1 - q)); the others are mpmath's root of
// betainc at 40 digits for the double q (mp.mpf(0.975), not '0.975').
TEST(StudentT, QuantilesAreExactToDoublePrecision) {
  const double pi = std::acos(-1.0);
  for (const double q : {0.05, 0.6, 0.9, 0.975, 0.995}) {
    const double cauchy = std::tan(pi * (q - 0.5));
    EXPECT_NEAR(student_t_quantile(q, 1), cauchy, 4e-15 * std::fabs(cauchy)) << q;
    const double two = (2 * q - 1) / std::sqrt(2 * q * (1 - q));
    EXPECT_NEAR(student_t_quantile(q, 2), two, 4e-15 * std::fabs(two)) << q;
  }
  const struct {
    double q, df, t;
  } kTable[] = {
      {0.975, 3, 3.1824463052837084359},   {0.975, 4, 2.7764451051977934898},
      {0.975, 30, 2.0422724563012378878},  {0.975, 1000, 1.9623390808264081039},
      {0.975, 1e5, 1.9599877075346092587}, {0.05, 10, -1.8124611228116764136},
  };
  for (const auto& c : kTable)
    EXPECT_NEAR(student_t_quantile(c.q, c.df), c.t, 1e-14 * std::fabs(c.t)) << c.q << " " << c.df;
}

// The median is 0 for every df; a bisection of the CDF gave 2.7e-6 at 10^5.
TEST(StudentT, MedianIsExactlyZero) {
  for (const double df : {1.0, 2.0, 7.0, 1e3, 1e5, 1e9})
    EXPECT_EQ(student_t_quantile(0.5, df), 0.0) << df;
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
