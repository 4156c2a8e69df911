#include "model/energy_model.hpp"

#include <gtest/gtest.h>

namespace infersim {
namespace {

TEST(EnergyModel, IdleServerDrawsIdlePowerForTheWholeRun) {
  const EnergyModel energy(EnergyKnobs{});
  // 420 W for an hour
  EXPECT_DOUBLE_EQ(energy.energy_wh(SimTime::from_seconds(3600), Duration::zero(), 8, 0, 0), 420);
}

TEST(EnergyModel, BusyCoreTimeAddsTheDynamicShare) {
  const EnergyModel energy(EnergyKnobs{});
  // 8 cores busy for the whole hour: the server draws its maximum.
  EXPECT_DOUBLE_EQ(
      energy.energy_wh(SimTime::from_seconds(3600), Duration::from_seconds(8 * 3600), 8, 0, 0),
      720);
}

TEST(EnergyModel, RadiosPayPerBit) {
  const EnergyModel energy(EnergyKnobs{0, 0, 283.17, 137.01});
  const double wh = energy.energy_wh(SimTime::zero(), Duration::zero(), 1, 1e9, 2e9);
  EXPECT_DOUBLE_EQ(wh, (1e9 * 283.17 + 2e9 * 137.01) * 1e-9 / 3600);
}

}  // namespace
}  // namespace infersim
