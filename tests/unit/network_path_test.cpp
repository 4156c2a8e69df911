#include "model/network_path.hpp"

#include <gtest/gtest.h>

namespace infersim {
namespace {

TEST(NetworkPath, EachHopRoundsLatencyAndTransmissionSeparately) {
  const NetworkPath path(default_hops());
  // 32000 bits: wifi 5 ms + 24615.38 ns -> 24615; man 10 ms + 32000 ns.
  EXPECT_EQ(path.transfer(32000).count_ns(), 5'000'000 + 24'615 + 10'000'000 + 32'000);
  // 16000 bits: wifi 12307.69 ns -> 12308.
  EXPECT_EQ(path.transfer(16000).count_ns(), 5'000'000 + 12'308 + 10'000'000 + 16'000);
}

TEST(NetworkPath, NothingToSendStillPaysTheLatency) {
  const NetworkPath path(default_hops());
  EXPECT_EQ(path.transfer(0).count_ns(), 15'000'000);
  EXPECT_EQ(path.latency().count_ns(), 15'000'000);
}

TEST(NetworkPath, NoHopsIsInstant) {
  const NetworkPath path({});
  EXPECT_EQ(path.transfer(1e9).count_ns(), 0);
  EXPECT_EQ(path.latency().count_ns(), 0);
}

TEST(NetworkPath, BandwidthIsInMegabitsPerSecond) {
  const NetworkPath path({{"link", 0, 8}});  // 8 Mbit/s: 1 MB takes one second
  EXPECT_EQ(path.transfer(8e6).count_ns(), 1'000'000'000);
}

}  // namespace
}  // namespace infersim
