// The devices' radios: energy per bit sent and received (MODEL.md section 8).
#include "model/radio_energy.hpp"

#include <gtest/gtest.h>

namespace infersim {
namespace {

TEST(RadioEnergy, RadiosPayPerBit) {
  const RadioEnergy energy(EnergyKnobs{283.17, 137.01});
  EXPECT_DOUBLE_EQ(energy.radio_wh(1e9, 2e9), (1e9 * 283.17 + 2e9 * 137.01) * 1e-9 / 3600);
  // 3600e9 bits sent at 1 nJ a bit is 1 Wh.
  EXPECT_DOUBLE_EQ(RadioEnergy(EnergyKnobs{1, 0}).radio_wh(3600e9, 5e9), 1);
}

}  // namespace
}  // namespace infersim
