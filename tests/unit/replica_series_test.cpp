// The replicas one by one (report/replica_series.hpp): each step's state held
// over its time on its own replica, cut at the slices' edges, time-weighted;
// replicas.csv's rows; a run beyond the cell cap keeps none and says so.
#include "report/replica_series.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace infersim {
namespace {

using ::testing::HasSubstr;

StepRecord step(std::uint32_t replica, double from_s, double to_s, std::uint32_t running,
                std::uint32_t waiting, std::uint32_t used, std::uint32_t blocks = 100) {
  StepRecord s;
  s.replica = replica;
  s.start = SimTime::from_seconds(from_s);
  s.end = SimTime::from_seconds(to_s);
  s.running = running;
  s.waiting = waiting;
  s.kv_blocks_used = used;
  s.kv_blocks = blocks;
  return s;
}

// Slices of 10 s over a 20 s run. Replica 0 steps over [2, 6) with 4
// running and 30 blocks, then over [8, 14) with 2 running, 1 waiting and 50
// blocks (2 s of it in slice 0, 4 s in slice 1); replica 1 over [12, 20)
// with 6 running and 10 blocks.
TEST(ReplicaSeries, EachReplicaTimeWeightedOverItsSlices) {
  ReplicaSeriesCollector c(Duration::from_seconds(10), 2);
  c.on_step(step(0, 2, 6, 4, 0, 30));
  c.on_step(step(0, 8, 14, 2, 1, 50));
  c.on_step(step(1, 12, 20, 6, 0, 10));
  const ReplicaSeries s = c.finish(SimTime::from_seconds(20));
  ASSERT_EQ(s.slices(), 2u);
  // Slice 0, replica 0: (4 x 4 + 2 x 2) / 10 running, (0 + 2 x 1) / 10
  // waiting, (30 x 4 + 50 x 2) / 10 blocks.
  EXPECT_DOUBLE_EQ(s.running[0], 2.0);
  EXPECT_DOUBLE_EQ(s.waiting[0], 0.2);
  EXPECT_DOUBLE_EQ(s.kv_used[0], 22.0);
  EXPECT_DOUBLE_EQ(s.running[1], 0.0);  // replica 1 idle in slice 0
  // Slice 1: replica 0 for 4 s, replica 1 for 8 s.
  EXPECT_DOUBLE_EQ(s.running[2], 2 * 4 / 10.0);
  EXPECT_DOUBLE_EQ(s.running[3], 6 * 8 / 10.0);
  EXPECT_DOUBLE_EQ(s.kv_used[3], 10 * 8 / 10.0);
  EXPECT_EQ(replica_series_csv(s),
            "t_s,replica,running_mean,waiting_mean,kv_use_pct\n"
            "0,0,2,0.2,22\n"
            "0,1,0,0,0\n"
            "10,0,0.8,0.4,20\n"
            "10,1,4.8,0,8\n");
}

TEST(ReplicaSeries, ARunBeyondTheCellCapKeepsNoneAndSaysSo) {
  // 2^22 cells: 64 replicas over 65537 slices of 1 s are one slice too many.
  ReplicaSeriesCollector c(Duration::from_seconds(1), 64);
  c.on_step(step(3, 0, 1, 1, 0, 1));
  const ReplicaSeries s = c.finish(SimTime::from_seconds(65537));
  EXPECT_TRUE(s.empty());
  EXPECT_THAT(s.omitted, HasSubstr("64 replicas over 65537 slices exceed 4194304 cells"));
  ReplicaSeriesCollector fits(Duration::from_seconds(1), 64);
  fits.on_step(step(3, 0, 1, 1, 0, 1));
  EXPECT_FALSE(fits.finish(SimTime::from_seconds(65536)).empty());
}

// A batching run writes replicas.csv beside timeseries.csv and draws it; an
// edge run writes neither.
TEST(ReplicaSeries, ABatchingRunWritesAndDrawsIt) {
  const auto dir = test::fresh_dir("replicas");
  const std::string trace = test::write_file(dir / "t.csv", test::kTwoBurstsTrace).string();
  const test::CliResult r =
      test::run_cli({"run", "--server", "batching", "--replicas", "3", "--recorded", "--trace",
                     trace, "--output", (dir / "b").string(), "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> lines =
      test::lines_of(test::read_file(dir / "b" / "replicas.csv"));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "t_s,replica,running_mean,waiting_mean,kv_use_pct");
  EXPECT_EQ(lines[1].substr(0, 4), "0,0,");
  EXPECT_EQ(lines[3].substr(0, 4), "0,2,");
  const test::CliResult edge = test::run_cli(
      {"run", "--recorded", "--trace", trace, "--output", (dir / "e").string(), "--plots", "none"});
  ASSERT_EQ(edge.status, 0) << edge.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "e" / "replicas.csv"));
}

}  // namespace
}  // namespace infersim
