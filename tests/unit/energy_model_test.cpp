#include "model/energy_model.hpp"

#include <gtest/gtest.h>

#include "model/edge_server.hpp"

namespace infersim {
namespace {

TEST(EnergyModel, IdleServerDrawsIdlePowerForTheWholeRun) {
  const EdgeServer server(EdgeServerKnobs{});
  // 420 W for an hour
  EXPECT_DOUBLE_EQ(server.energy_wh(Duration::from_seconds(3600), Duration::zero()), 420);
}

TEST(EnergyModel, BusyCoreTimeAddsTheDynamicShare) {
  const EdgeServer server(EdgeServerKnobs{});
  // 8 cores busy for the whole hour: the server draws its maximum.
  EXPECT_DOUBLE_EQ(server.energy_wh(Duration::from_seconds(3600), Duration::from_seconds(8 * 3600)),
                   720);
  // Half the core-time busy: halfway between idle and maximum.
  EXPECT_DOUBLE_EQ(server.energy_wh(Duration::from_seconds(3600), Duration::from_seconds(4 * 3600)),
                   570);
}

TEST(EnergyModel, RadiosPayPerBit) {
  const EnergyModel energy(EnergyKnobs{283.17, 137.01});
  EXPECT_DOUBLE_EQ(energy.radio_wh(1e9, 2e9), (1e9 * 283.17 + 2e9 * 137.01) * 1e-9 / 3600);
  // 3600e9 bits sent at 1 nJ a bit is 1 Wh.
  EXPECT_DOUBLE_EQ(EnergyModel(EnergyKnobs{1, 0}).radio_wh(3600e9, 5e9), 1);
}

}  // namespace
}  // namespace infersim
