#include "core/sim_time.hpp"

#include <gtest/gtest.h>

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
