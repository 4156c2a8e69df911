#include "core/sim_time.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace infersim {
namespace {

TEST(SimTime, SecondsRoundOnceHalfAwayFromZero) {
  EXPECT_EQ(seconds_to_ns(1.5), 1'500'000'000);
  EXPECT_EQ(seconds_to_ns(0.1), 100'000'000);
  EXPECT_EQ(seconds_to_ns(2.5e-9), 3);  // 2.5 ns rounds away from zero
  EXPECT_EQ(seconds_to_ns(-2.5e-9), -3);
  EXPECT_EQ(seconds_to_ns(1.4e-9), 1);
  // 32000 MI / 60000 MIPS: 0.5333... s
  EXPECT_EQ(seconds_to_ns(32000.0 / 60000.0), 533'333'333);
}

// The inline rounding against libm's llround: halves, just below and above
// them, both signs, every magnitude up to the clock's limit.
TEST(SimTime, SecondsToNsIsLlroundOfTheScaledValue) {
  std::vector<double> seconds = {0,
                                 -0.0,
                                 0.5e-9,
                                 -0.5e-9,
                                 1.5e-9,
                                 0.49999999999999994e-9,
                                 4503599627370495.5e-9,
                                 4503599627370497e-9,
                                 9.2e9,
                                 -9.2e9,
                                 9223372036.854774};
  // Just below, at and above 2^k - 0.5 ns and 2^k ns, where scaled + 0.5
  // reaches the next power of two.
  for (int k = 0; k <= 53; ++k) {
    for (const double ns : {std::ldexp(1.0, k) - 0.5, std::ldexp(1.0, k)}) {
      for (const double v : {std::nextafter(ns, 0.0), ns, std::nextafter(ns, 1e300)})
        seconds.push_back(v / 1e9);
    }
  }
  std::mt19937_64 bits(7);
  for (int i = 0; i < 200000; ++i) {
    const double mantissa = std::uniform_real_distribution<double>(-1, 1)(bits);
    const int exponent = std::uniform_int_distribution<int>(-12, 9)(bits);
    seconds.push_back(mantissa * std::pow(10.0, exponent));
    seconds.push_back(std::nextafter(std::round(seconds.back() * 2e9) / 2e9, 1.0));
    seconds.push_back(std::round(seconds[seconds.size() - 2] * 2e9) / 2e9);  // a half-ns
  }
  for (const double s : seconds) {
    if (!(std::fabs(s * 1e9) < 9.2e18)) continue;
    ASSERT_EQ(seconds_to_ns(s), std::llround(s * 1e9)) << s;
  }
}

TEST(SimTime, RefusesWhatTheClockCannotHold) {
  EXPECT_THROW(seconds_to_ns(1e10), std::out_of_range);  // 1e19 ns > int64
  EXPECT_THROW(seconds_to_ns(std::numeric_limits<double>::quiet_NaN()), std::out_of_range);
  EXPECT_THROW(seconds_to_ns(std::numeric_limits<double>::infinity()), std::out_of_range);
  EXPECT_NO_THROW(seconds_to_ns(9.2e9));
}

TEST(SimTime, InstantsAndDurationsCombine) {
  const SimTime t = SimTime::from_seconds(2);
  const Duration d = Duration::ns(250);
  EXPECT_EQ((t + d).count_ns(), 2'000'000'250);
  EXPECT_EQ((t + d) - t, d);
  EXPECT_LT(t, t + d);
  EXPECT_DOUBLE_EQ(Duration::ns(1'500'000'000).seconds(), 1.5);
}

}  // namespace
}  // namespace infersim
