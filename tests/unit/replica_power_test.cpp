#include "model/replica_power.hpp"

#include <gtest/gtest.h>

namespace infersim {
namespace {

TEST(ReplicaPower, IsIdlePowerAndTheShareAboveItWhileStepping) {
  BatchingKnobs k;
  k.gpu_idle_w = 100;
  k.gpu_max_w = 700;
  const ReplicaPower p = ReplicaPower::of(k);
  EXPECT_EQ(p.idle_w, 100);
  EXPECT_EQ(p.dynamic_w, 600);
}

// Two replicas provisioned an hour each, stepping half an hour in all:
// (2 x 100 W x 3600 s + 600 W x 1800 s) / 3600 = 500 Wh, the same from sums
// in W s or in W ns.
TEST(ReplicaPower, EnergyIsTheSameFromSecondsOrNanoseconds) {
  const ReplicaPower p{100, 600};
  EXPECT_DOUBLE_EQ(
      replica_energy_wh(p, 2, Duration::ns(3'600'000'000'000), Duration::ns(1'800'000'000'000)),
      500);
  EXPECT_DOUBLE_EQ(replica_energy_wh(2 * 100 * 3.6e12, 600 * 1.8e12, 1e9), 500);
  EXPECT_EQ(replica_energy_wh(p, 1, Duration::zero(), Duration::zero()), 0);
}

}  // namespace
}  // namespace infersim
