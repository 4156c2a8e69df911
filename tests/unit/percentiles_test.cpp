// Exact percentiles as NumPy's default interpolation computes them: one at a
// time against NumPy's own figures, and several at once against one at a time.
#include "core/percentiles.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

namespace infersim {
namespace {

TEST(Percentile, InterpolatesLinearlyLikeNumPy) {
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 0.5), 2.5);  // numpy.percentile([1,2,3,4], 50)
  v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 0.9), 3.7);
  v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 0.99), 3.9699999999999998);  // numpy gives 3.9699999999999998
  v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 0), 1);
  v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*percentile(v, 1), 4);
}

TEST(Percentile, OneValueAndNone) {
  std::vector<double> one = {7};
  EXPECT_DOUBLE_EQ(*percentile(one, 0.99), 7);
  std::vector<double> none;
  EXPECT_FALSE(percentile(none, 0.5).has_value());
}

TEST(Percentiles, AgreeWithOnePercentileAtATime) {
  std::mt19937_64 bits(1);
  for (const std::size_t n : {1u, 2u, 10u, 4097u, 100000u}) {
    std::vector<double> v(n);
    for (auto& x : v)
      x = static_cast<double>(bits() % 100000) / 7.0;
    const std::vector<double> qs = {0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1};
    const std::vector<std::optional<double>> all = percentiles(v, qs);
    for (std::size_t i = 0; i < qs.size(); ++i) {
      std::vector<double> copy = v;
      EXPECT_EQ(*all[i], *percentile(copy, qs[i])) << n << " " << qs[i];
    }
  }
  EXPECT_FALSE(percentiles({}, {0.5})[0].has_value());
}

TEST(Percentiles, OfNanosecondsAgreeWithOnePercentileAtATime) {
  std::mt19937_64 bits(2);
  for (const std::size_t n : {1u, 2u, 10u, 4097u, 100000u}) {
    std::vector<std::int64_t> ns(n);
    for (auto& x : ns)
      x = static_cast<std::int64_t>(bits() % 10'000'000'000ull);
    const std::vector<double> qs = {0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1};
    const std::vector<std::optional<double>> all = percentiles_seconds(ns, qs);
    for (std::size_t i = 0; i < qs.size(); ++i) {
      std::vector<std::int64_t> copy = ns;
      EXPECT_EQ(*all[i], *percentile_seconds(copy, qs[i])) << n << " " << qs[i];
    }
  }
  EXPECT_FALSE(percentiles_seconds({}, {0.5})[0].has_value());
}

}  // namespace
}  // namespace infersim
