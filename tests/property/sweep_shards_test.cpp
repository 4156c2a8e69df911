// A sweep cut into shards that run as separate processes, then merged, writes
// the unsharded sweep's sweep.csv byte for byte; and a sweep's results do not
// depend on its thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;

std::string shell_quoted(const std::string& text) {
  return "'" + text + "'";
}

class SweepShards : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir();
    // The seed's trace cut to its first five minutes keeps each run short.
    common_ = std::string(" sweep --trace ") + shell_quoted(test::seed_trace()) +
              " --duration 300 --vary cores=1:4:1 --vary decode-budget=0.1,0.5 --force";
  }
  std::string command(const std::string& extra, const std::string& folder) const {
    return shell_quoted(INFERSIM_BINARY) + common_ + " " + extra + " --output " +
           shell_quoted((dir_ / folder).string()) + " > /dev/null";
  }
  std::string csv(const std::string& folder) const {
    return test::read_file(dir_ / folder / "sweep.csv");
  }
  fs::path dir_;
  std::string common_;
};

TEST_F(SweepShards, MergedShardsEqualTheUnshardedSweepByteForByte) {
  const std::string whole = command("-j 1", "whole");
  ASSERT_EQ(std::system(whole.c_str()), 0) << whole;
  // Three shards at once, each its own process, as a cluster would run them.
  std::string shards = "set -e; ";
  for (int k = 1; k <= 3; ++k) {
    shards += command("-j 1 --shard " + std::to_string(k) + "/3", "shard" + std::to_string(k)) +
              " & p" + std::to_string(k) + "=$!; ";
  }
  shards += "wait $p1; wait $p2; wait $p3";
  ASSERT_EQ(std::system(("bash -c " + shell_quoted(shards)).c_str()), 0) << shards;
  const std::string merge = shell_quoted(INFERSIM_BINARY) + " merge --output " +
                            shell_quoted((dir_ / "merged").string()) + " " +
                            shell_quoted((dir_ / "shard2").string()) + " " +
                            shell_quoted((dir_ / "shard3").string()) + " " +
                            shell_quoted((dir_ / "shard1").string()) + " > /dev/null";
  ASSERT_EQ(std::system(merge.c_str()), 0) << merge;

  const std::string expected = csv("whole");
  // A header and 8 points of two modes.
  EXPECT_EQ(std::count(expected.begin(), expected.end(), '\n'), 1 + 8 * 2);
  EXPECT_EQ(csv("merged"), expected);
  // Each shard holds only its own rows: 3, 3 and 2 points.
  const std::string shard3 = csv("shard3");
  EXPECT_EQ(std::count(shard3.begin(), shard3.end(), '\n'), 1 + 2 * 2);
}

TEST_F(SweepShards, ResultsDoNotDependOnTheThreadCount) {
  for (const char* j : {"1", "3", "8"}) {
    const std::string run = command(std::string("-j ") + j, std::string("j") + j);
    ASSERT_EQ(std::system(run.c_str()), 0) << run;
  }
  const std::string one = csv("j1");
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(csv("j3"), one);
  EXPECT_EQ(csv("j8"), one);
}

}  // namespace
}  // namespace infersim
