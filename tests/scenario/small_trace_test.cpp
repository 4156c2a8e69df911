// A three-request trace worked out by hand from MODEL.md sections 5 to 8, on
// one core, so that every instant below is the spec's arithmetic, not the
// program's output.
#include <gtest/gtest.h>

#include "scenario/scenario.hpp"
#include "test_support.hpp"
#include "trace/azure_csv_reader.hpp"

namespace infersim {
namespace {

constexpr const char* kTrace =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2024-01-01 00:00:00.000,1000,10\n"
    "2024-01-01 00:00:00.000,500,0\n"
    "2024-01-01 00:00:00.500,2000,20\n";

class SmallTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto dir = test::fresh_dir();
    path_ = test::write_file(dir / "trace.csv", kTrace).string();
    settings_.cores = 1;
    settings_.trace_path = path_;
    result_ = test::run_recorded(settings_, read_azure_csv(path_), true);
  }
  std::string path_;
  Settings settings_;
  ModeResult result_;
};

TEST_F(SmallTrace, FirstRequestCrossesTheNetworkAndRunsAtOnce) {
  const RequestOutcome o = result_.log[0];
  // up: 32000 bits, wifi 5 ms + 24615 ns, man 10 ms + 32000 ns
  EXPECT_EQ(o.server_arrival.count_ns(), 15'056'615);
  EXPECT_EQ(o.start.count_ns(), 15'056'615);
  EXPECT_EQ(o.finish.count_ns(), 15'056'615 + 533'333'333);
  // down: 320 bits, wifi 5 ms + 246 ns, man 10 ms + 320 ns
  EXPECT_EQ(o.response.count_ns(), 548'389'948 + 15'000'566);
  // ttft: start + 233333333 ns to the first token + 15 ms of latency
  EXPECT_EQ((o.first_token - SimTime::zero()).count_ns(), 263'389'948);
}

TEST_F(SmallTrace, LaterIssuedRequestWaitsEvenIfItReachesTheServerFirst) {
  const RequestOutcome o = result_.log[1];
  // 16000 bits reach the server at 15028308 ns, before request 0, but it was issued second.
  EXPECT_EQ(o.server_arrival.count_ns(), 15'028'308);
  EXPECT_EQ(o.start.count_ns(), 548'389'948);
  EXPECT_EQ(o.wait().count_ns(), 533'361'640);
  EXPECT_EQ(o.response.count_ns(), 648'389'948 + 15'000'000);  // no result bits
  EXPECT_EQ(o.first_token, o.response);  // no generated token: first token = whole result
  EXPECT_EQ(o.device, 1u);
}

TEST_F(SmallTrace, ThirdRequestQueuesBehindBoth) {
  const RequestOutcome o = result_.log[2];
  EXPECT_EQ(o.server_arrival.count_ns(), 500'000'000 + 15'113'231);
  EXPECT_EQ(o.start.count_ns(), 648'389'948);
  EXPECT_EQ(o.finish.count_ns(), 648'389'948 + 1'066'666'667);
  EXPECT_EQ(o.response.count_ns(), 1'715'056'615 + 15'001'132);
}

TEST_F(SmallTrace, SummaryFollowsFromTheInstants) {
  const Summary& s = result_.summary;
  EXPECT_EQ(*s.get("requests"), 3);
  EXPECT_EQ(*s.get("deadline_met"), 3);  // makespans 0.56, 0.66, 1.23 s against 3, 2, 4 s
  EXPECT_DOUBLE_EQ(*s.get("compute_s"), (533'333'333 + 100'000'000 + 1'066'666'667) / 1e9);
  EXPECT_DOUBLE_EQ(*s.get("waiting_total_s"), (533'361'640 + 133'276'717) / 1e9);
  EXPECT_DOUBLE_EQ(*s.get("run_length_s"), 60);  // 0.5 s rounded up to a minute
  EXPECT_DOUBLE_EQ(*s.get("end_s"), 60);
  EXPECT_DOUBLE_EQ(*s.get("utilization"), 1'700'000'000 / (1 * 60e9));
  EXPECT_DOUBLE_EQ(*s.get("traffic_mb"), (3500 + 30) * 32 / 8 / 1e6);
  const double energy =
      (420 * 60.0 + 300 * 1.7 / 1) / 3600 + (112000 * 283.17 + 960 * 137.01) * 1e-9 / 3600;
  EXPECT_DOUBLE_EQ(*s.get("energy_wh"), energy);
}

}  // namespace
}  // namespace infersim
