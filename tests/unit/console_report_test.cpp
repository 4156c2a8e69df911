// What the console prints after a run, read as a user reads it: the figures
// under their names and in units that read, the columns in their place (an
// asymmetric row, so that swapped columns or an inverted ratio show), the
// synthetic column naming its arrival process, replicated cells with their
// interval, and no cores where the server has none.
#include "report/console_report.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>

#include <nlohmann/json.hpp>

#include "model/batching_server.hpp"
#include "model/edge_server.hpp"
#include "report/figure_text.hpp"
#include "report_cells.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// Ten bursts, 10 s apart, of ten requests at one instant, each of 21
// generated tokens and no context: 21 × 2000 MI / 60000 MIPS = 0.7 s on a
// core. On one core a burst's requests wait 0, 0.7, ..., 6.3 s (they reach
// the server together: equal sizes cross the network alike), 3.15 s on
// average, and the burst is done 7 s after it came, before the next.
std::string bursts_trace() {
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int burst = 0; burst < 10; ++burst) {
    const int t = burst * 10;
    char line[64];
    std::snprintf(line, sizeof(line), "2024-01-01 00:%02d:%02d.000,0,21\n", t / 60, t % 60);
    for (int i = 0; i < 10; ++i)
      csv += line;
  }
  return csv;
}

// The cells of the console line starting with `label`: split where two or
// more spaces part them.
std::vector<std::string> cells_of(const std::string& out, const std::string& label) {
  for (const std::string& line : test::lines_of(out)) {
    if (!line.starts_with(label)) continue;
    std::vector<std::string> cells;
    const std::regex gap("  +");
    std::sregex_token_iterator it(line.begin(), line.end(), gap, -1), end;
    for (; it != end; ++it)
      cells.push_back(*it);
    return cells;
  }
  ADD_FAILURE() << "no line starts with '" << label << "' in:\n" << out;
  return {};
}

void expect_seconds(const std::string& cell, double expected, const std::string& what) {
  const auto v = test::printed_seconds(cell);
  ASSERT_TRUE(v.has_value()) << what << ": '" << cell << "' is not a duration";
  EXPECT_NEAR(v->value, expected, v->tolerance + 1e-12) << what << ": '" << cell << "'";
}

class Console : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir();
    trace_ = test::write_file(dir_ / "trace.csv", bursts_trace()).string();
  }
  test::CliResult run(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {
        "run", "--trace", trace_, "--output", (dir_ / "run").string(), "--plots", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args);
  }
  fs::path dir_;
  std::string trace_;
};

// The mean wait differs between the columns (3.15 s recorded, the synthetic
// one from its own requests.csv), so a swapped column or an inverted ratio
// cannot pass.
TEST_F(Console, AverageWaitRowHoldsEachModesFigureAndTheirRatio) {
  const auto r = run({"--cores", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const double recorded = test::column_mean_s(dir_ / "run" / "recorded" / "requests.csv", "wait_s");
  const double synthetic =
      test::column_mean_s(dir_ / "run" / "synthetic" / "requests.csv", "wait_s");
  EXPECT_NEAR(recorded, 3.15, 1e-6);  // by hand, above
  ASSERT_GT(synthetic, 0);
  ASSERT_GT(std::abs(recorded / synthetic - 1), 0.1) << "the row must be asymmetric";

  const auto cells = cells_of(r.out, "Wait for a core, mean");
  ASSERT_EQ(cells.size(), 4u);
  expect_seconds(cells[1], recorded, "recorded column");
  expect_seconds(cells[2], synthetic, "synthetic column");
  const auto ratio = test::printed_number(cells[3]);
  ASSERT_TRUE(ratio.has_value()) << cells[3];
  EXPECT_NEAR(ratio->value, recorded / synthetic, ratio->tolerance + 1e-9) << cells[3];
  // The header names the columns in that order.
  EXPECT_THAT(cells_of(r.out, "Metric"),
              ::testing::ElementsAre("Metric", "Recorded trace", "Synthetic poisson",
                                     "Recorded/synthetic"));

  // The benchmark block: the same means in ms with two decimals.
  const auto block = cells_of(r.out, "Mean wait (ms):");
  ASSERT_EQ(block.size(), 3u);
  EXPECT_NEAR(std::stod(block[1]), recorded * 1000, 0.005 + 1e-9);
  EXPECT_NEAR(std::stod(block[2]), synthetic * 1000, 0.005 + 1e-9);
}

// vLLM's result block, then the deadline figures under what they are.
TEST_F(Console, PrintsTheServingBenchmarkBlockAndNamesEachFigure) {
  const auto r = run({"--recorded", "--cores", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* line :
       {"============ Serving Benchmark Result ============", "Successful requests:",
        "Benchmark duration (s):", "Total input tokens:", "Total generated tokens:",
        "Request throughput (req/s):", "Output token throughput (tok/s):",
        "Peak output token throughput (tok/s):", "Peak concurrent requests:",
        "Total token throughput (tok/s):", "---------------Time to First Token----------------",
        "Mean TTFT (ms):", "Median TTFT (ms):", "P99 TTFT (ms):",
        "-----Time per Output Token (excl. 1st token)------",
        "Mean TPOT (ms):", "Median TPOT (ms):", "P99 TPOT (ms):"}) {
    EXPECT_THAT(r.out, HasSubstr("\n" + std::string(line))) << line;
  }
  // Deadlines after the block's latencies.
  EXPECT_LT(r.out.find("P99 TTFT (ms):"), r.out.find("Deadline met (E2E within budget):"));
  // 100 requests; the figures of the table under their names.
  EXPECT_EQ(cells_of(r.out, "Successful requests:").at(1), "100");
  EXPECT_EQ(cells_of(r.out, "Total generated tokens:").at(1), "2100");
  EXPECT_THAT(r.out, HasSubstr("\nRequests that met their deadline"));
  EXPECT_THAT(r.out, HasSubstr("\nE2E latency, mean over deadline-met requests"));
  for (const char* gone : {"completed successfully", "tasks=", "ok=", "Average request makespan"})
    EXPECT_THAT(r.out, Not(HasSubstr(gone))) << gone;
  // TTFT as it reads: the mean TTFT of a burst is its mean wait plus the
  // first token's time, seconds, not thousands of ms.
  const auto ttft = cells_of(r.out, "Time to first token (TTFT), mean");
  ASSERT_EQ(ttft.size(), 2u);
  EXPECT_TRUE(test::printed_seconds(ttft[1]).has_value()) << ttft[1];
  EXPECT_THAT(ttft[1], ::testing::EndsWith(" s"));
}

TEST_F(Console, SyntheticColumnNamesTheArrivalProcessUsed) {
  const auto r = run({"--arrivals", "gamma", "--burstiness", "4"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(cells_of(r.out, "Metric"),
              ::testing::ElementsAre("Metric", "Recorded trace", "Synthetic gamma, burstiness 4",
                                     "Recorded/synthetic"));
  EXPECT_THAT(r.out, Not(HasSubstr("Synthetic poisson")));
}

// Three seeds, synthetic only: every cell carries its 95 % interval, and the
// line above the table states the mean count the table shows.
TEST_F(Console, ReplicatedSyntheticRunShowsItsIntervalAndAgreesWithItsLine) {
  const auto r = run({"--synthetic", "--replications", "3", "--cores", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto head = cells_of(r.out, "Metric");
  ASSERT_EQ(head.size(), 2u);
  EXPECT_EQ(head[1], "Synthetic poisson, mean ± 95 % CI of 3 seeds");
  const auto requests = cells_of(r.out, "Requests generated");
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_THAT(requests[1], HasSubstr(" ± "));
  EXPECT_THAT(r.out, HasSubstr(" drew " + requests[1] + " requests on average."));
  EXPECT_THAT(cells_of(r.out, "Wait for a core, mean").at(1), HasSubstr(" ± "));
  EXPECT_THAT(cells_of(r.out, "Mean TTFT (ms):").at(1), HasSubstr(" ± "));
  // The mean of the seeds' counts, from replications.csv.
  const auto rows = test::read_csv(dir_ / "run" / "replications.csv");
  ASSERT_EQ(rows.size(), 3u);
  double sum = 0;
  for (const auto& row : rows)
    sum += std::stod(row.at("requests"));
  EXPECT_NEAR(test::printed_number(requests[1])->value, sum / 3, 0.05 + 1e-9);
}

TEST_F(Console, BatchingServerSpeaksOfItsReplicasNotCores) {
  const auto r = run({"--server", "batching"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("core")));
  EXPECT_THAT(r.out, Not(HasSubstr("edge CPU")));
  EXPECT_THAT(r.out, HasSubstr("\nWait to be scheduled, mean"));
  EXPECT_THAT(r.out, HasSubstr("\nAverage replica utilization"));
  const std::string page = test::read_file(dir_ / "run" / "report.html");
  EXPECT_THAT(page, Not(HasSubstr("edge CPU")));
  EXPECT_THAT(page, Not(HasSubstr("Wait for a core")));
}

TEST(FigureText, DurationsReadInTheirUnit) {
  EXPECT_EQ(duration_text(0), "0 s");
  EXPECT_EQ(duration_text(0.0056804), "5.680 ms");
  EXPECT_EQ(duration_text(0.47303), "473.0 ms");
  EXPECT_EQ(duration_text(13.5824), "13.582 s");
  EXPECT_EQ(duration_text(127.42), "127.4 s");
  EXPECT_EQ(duration_text(1500), "25.0 min");
  EXPECT_EQ(duration_text(14112), "3.92 h");
  EXPECT_EQ(duration_text(0.4730, 0.0012), "473.0 ± 1.2 ms");
  EXPECT_EQ(millis_text(0.0333), "33.30");
  EXPECT_EQ(millis_text(594.1187), "594118.70 (594.1 s)");
  EXPECT_EQ(millis_text(1500), "1500000.00 (25.0 min)");
}

TEST(FigureText, LabelsFollowTheServer) {
  // Each server's own words, as it describes itself.
  const ServerDescription edge = EdgeServer(8).describe();
  const ServerDescription batching = BatchingServer(BatchingKnobs{}).describe();
  EXPECT_EQ(figure_label("success_rate", edge), "Requests that met their deadline");
  EXPECT_EQ(figure_label("avg_makespan_ok_s", edge),
            "E2E latency, mean over deadline-met requests");
  EXPECT_EQ(figure_label("e2el_mean_s", edge), "E2E latency, mean over all requests");
  EXPECT_EQ(figure_label("avg_wait_s", edge), "Wait for a core, mean");
  EXPECT_EQ(figure_label("avg_wait_s", batching), "Wait to be scheduled, mean");
  EXPECT_EQ(figure_label("wait_p99_s", batching), "Wait to be scheduled, p99");
  EXPECT_EQ(figure_label("utilization", edge), "Average edge CPU utilization");
  EXPECT_EQ(figure_label("utilization", batching), "Average replica utilization (time stepping)");
  EXPECT_EQ(figure_label("compute_s", batching), "Total replica busy time");
  EXPECT_EQ(figure_label("ttft_p99.9_s", edge), "Time to first token (TTFT), p99.9");
  EXPECT_EQ(edge.headline, "8 cores of 60000 MIPS");
  EXPECT_EQ(batching.headline,
            "1 batching replica (router round-robin, 31250 KV blocks of 16 tokens each)");
  EXPECT_EQ(ratio_text(6.0, 2.0), "3.000");
  EXPECT_EQ(ratio_text(2392.0, 1.0), "2392");
  EXPECT_EQ(ratio_text(1.0, 0.0), "n/a");
}

}  // namespace
}  // namespace infersim
