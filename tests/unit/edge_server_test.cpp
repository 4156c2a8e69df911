#include "model/edge_server.hpp"

#include <gtest/gtest.h>

namespace infersim {
namespace {

SimTime t(std::int64_t ns) {
  return SimTime::ns(ns);
}
Duration d(std::int64_t ns) {
  return Duration::ns(ns);
}

TEST(EdgeCost, LengthExecutionAndFirstTokenFromTokens) {
  const EdgeCost cost = edge_cost(1000, 10, EdgeServerKnobs{});
  EXPECT_DOUBLE_EQ(cost.length_mi, 1000 * 12 + 10 * 2000);
  EXPECT_EQ(cost.exec.count_ns(), 533'333'333);         // 32000 / 60000 s
  EXPECT_EQ(cost.first_token.count_ns(), 233'333'333);  // (12000 + 2000) / 60000 s
}

TEST(EdgeCost, WithoutGeneratedTokensTheFirstTokenIsTheWholeExecution) {
  const EdgeCost cost = edge_cost(500, 0, EdgeServerKnobs{});
  EXPECT_EQ(cost.exec.count_ns(), 100'000'000);
  EXPECT_EQ(cost.first_token, cost.exec);
}

TEST(EdgeCost, KnobsChangeTheCosts) {
  EdgeServerKnobs knobs;
  knobs.mi_per_generated_token = 1000;
  knobs.mips_per_core = 30000;
  EXPECT_EQ(edge_cost(100, 3, knobs).exec.count_ns(), 140'000'000);  // (1200 + 3000) / 30000 s
}

TEST(EdgeCost, MeanSizesMayBeReal) {
  const EdgeCost cost = edge_cost(2.5, 0.5, EdgeServerKnobs{});
  EXPECT_DOUBLE_EQ(cost.length_mi, 2.5 * 12 + 0.5 * 2000);
  EXPECT_EQ(cost.first_token, cost.exec);  // fewer than one generated token
}

TEST(EdgeServer, StartsAtOnceWhileACoreIsFree) {
  EdgeServer server(2);
  const CoreAssignment a = server.assign(t(100), d(50));
  EXPECT_EQ(a.start, t(100));
  EXPECT_EQ(a.finish, t(150));
  const CoreAssignment b = server.assign(t(100), d(70));
  EXPECT_EQ(b.start, t(100));
  EXPECT_NE(a.core, b.core);
}

TEST(EdgeServer, ServesInIssueOrderWhenCoresAreBusy) {
  EdgeServer server(2);
  server.assign(t(0), d(100));                           // core 0 until 100
  server.assign(t(0), d(40));                            // core 1 until 40
  const CoreAssignment c = server.assign(t(10), d(30));  // earliest free: core 1 at 40
  EXPECT_EQ(c.core, 1u);
  EXPECT_EQ(c.start, t(40));
  EXPECT_EQ(c.finish, t(70));
  const CoreAssignment e =
      server.assign(t(5), d(10));  // issued later, arrived earlier: waits its turn
  EXPECT_EQ(e.start, t(70));
  EXPECT_EQ(server.busy(), d(180));
}

TEST(EdgeServer, EqualFreeTimesGoToTheLowestCore) {
  EdgeServer server(3);
  EXPECT_EQ(server.assign(t(0), d(10)).core, 0u);
  EXPECT_EQ(server.assign(t(0), d(10)).core, 1u);
  EXPECT_EQ(server.assign(t(0), d(10)).core, 2u);
  EXPECT_EQ(server.assign(t(0), d(10)).core, 0u);  // all free at 10: lowest index
}

TEST(EdgeServer, MoreRequestsThanCoresQueueUp) {
  EdgeServer server(1);
  std::int64_t expected_start = 0;
  for (int i = 0; i < 5; ++i) {
    const CoreAssignment a = server.assign(t(0), d(7));
    EXPECT_EQ(a.start, t(expected_start));
    expected_start += 7;
  }
}

TEST(EdgeServer, AnIdleCoreWaitsForTheRequest) {
  EdgeServer server(1);
  server.assign(t(0), d(10));
  EXPECT_EQ(server.assign(t(1000), d(10)).start, t(1000));
}

// The server's energy (MODEL.md section 8's first term).
TEST(EdgeServer, IdleServerDrawsIdlePowerForTheWholeRun) {
  const EdgeServer server(EdgeServerKnobs{});
  // 420 W for an hour
  EXPECT_DOUBLE_EQ(server.energy_wh(Duration::from_seconds(3600), Duration::zero()), 420);
}

TEST(EdgeServer, BusyCoreTimeAddsTheDynamicShare) {
  const EdgeServer server(EdgeServerKnobs{});
  // 8 cores busy for the whole hour: the server draws its maximum.
  EXPECT_DOUBLE_EQ(server.energy_wh(Duration::from_seconds(3600), Duration::from_seconds(8 * 3600)),
                   720);
  // Half the core-time busy: halfway between idle and maximum.
  EXPECT_DOUBLE_EQ(server.energy_wh(Duration::from_seconds(3600), Duration::from_seconds(4 * 3600)),
                   570);
}

}  // namespace
}  // namespace infersim
