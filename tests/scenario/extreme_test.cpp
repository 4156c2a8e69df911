// Extreme but valid scenarios finish with finite figures and every request
// accounted for: a server drowning in its queue, requests that generate
// nothing, a single request, one instant for all, a run of zero length, and a
// million requests, and ten million in memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "scenario/scenario.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

// Every figure a number and finite, but those that may not exist (null) named.
void expect_finite(const json& summary, const std::vector<std::string>& may_be_null = {}) {
  ASSERT_TRUE(summary.is_object());
  for (const auto& item : summary.items()) {
    const std::string& key = item.key();
    const json& value = item.value();
    const bool allowed =
        std::any_of(may_be_null.begin(), may_be_null.end(), [&](const std::string& name) {
          // a name ending in '*' allows every key with that prefix
          return name == key ||
                 (name.back() == '*' && key.rfind(name.substr(0, name.size() - 1), 0) == 0);
        });
    if (value.is_null() && allowed) continue;
    ASSERT_TRUE(value.is_number()) << key << " = " << value.dump();
    EXPECT_TRUE(std::isfinite(value.get<double>())) << key;
  }
}

// Requests conserved: every request scheduled or dropped, every scheduled one
// met its deadline or missed it.
void expect_conserved(const json& summary, double lines) {
  EXPECT_EQ(summary["requests"].get<double>() + summary["dropped"].get<double>(), lines);
  EXPECT_EQ(summary["deadline_met"].get<double>() + summary["deadline_missed"].get<double>(),
            summary["requests"].get<double>());
}

class Extreme : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir(); }
  // A recorded run into a fresh folder; its summary.json.
  json run(const std::string& trace, std::vector<std::string> extra = {}) {
    const fs::path output = dir_ / ("run" + std::to_string(++runs_));
    std::vector<std::string> args = {"run",      "--recorded",    "--trace", trace,
                                     "--output", output.string(), "--plots", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    last_output_ = output;
    if (r.status != 0) return json::object();
    return json::parse(test::read_file(output / "summary.json"));
  }
  std::string trace_file(const std::string& rows) {
    return test::write_file(dir_ / "t.csv", kHeader + rows).string();
  }
  fs::path dir_;
  fs::path last_output_;
  int runs_ = 0;
};

TEST_F(Extreme, OneCoreUnderTheConversationHourQueuesThousands) {
  const fs::path trace = test::published_trace("azure_llm_conv_1h.csv");
  ASSERT_TRUE(fs::exists(trace));
  const std::string text = test::read_file(trace);
  // lines after the header; the published file has no newline after its last line
  const double lines = static_cast<double>(std::count(text.begin(), text.end(), '\n') - 1 +
                                           (text.back() != '\n' ? 1 : 0));
  const json summary = run(trace.string(), {"--cores", "1"});
  expect_finite(summary);
  expect_conserved(summary, lines);
  EXPECT_EQ(summary["requests"], lines);
  EXPECT_GT(summary["waiting_total_s"].get<double>(), 1e8);
  EXPECT_GT(summary["utilization"].get<double>(), 0.99);
  EXPECT_LE(summary["utilization"].get<double>(), 1.0);

  // The queue when the last request arrives: arrived, not yet started.
  std::istringstream requests(test::read_file(last_output_ / "requests.csv"));
  std::string row;
  std::getline(requests, row);
  ASSERT_THAT(row, ::testing::StartsWith("id,device,arrival_s,context_tokens,generated_tokens,"
                                         "server_arrival_s,start_s,"));
  std::vector<std::pair<double, double>> arrival_start;
  while (std::getline(requests, row)) {
    double cells[7];
    std::istringstream fields(row);
    std::string cell;
    for (double& c : cells) {
      std::getline(fields, cell, ',');
      c = std::stod(cell);
    }
    arrival_start.emplace_back(cells[5], cells[6]);
  }
  ASSERT_EQ(static_cast<double>(arrival_start.size()), lines);
  double last_arrival = 0;
  for (const auto& [arrival, start] : arrival_start)
    last_arrival = std::max(last_arrival, arrival);
  std::size_t queued = 0;
  for (const auto& [arrival, start] : arrival_start)
    queued += arrival <= last_arrival && start > last_arrival;
  EXPECT_GT(queued, 1000u);
}

TEST_F(Extreme, RequestsThatGenerateNothing) {
  const std::string trace =
      trace_file("2024-01-01 00:00:00,100,0\n2024-01-01 00:00:01,0,0\n2024-01-01 00:00:03,7,0\n");
  const json summary = run(trace);
  // TPOT needs a second generated token: none exists
  expect_finite(summary, {"tpot_*"});
  expect_conserved(summary, 3);
  EXPECT_EQ(summary["requests"], 3);
  EXPECT_EQ(summary["deadline_met"], 3) << "the TTFT budget alone is ample";
  // 1200, 0 and 84 MI: 0.02 + 0 + 0.0014 s.
  EXPECT_NEAR(summary["compute_s"].get<double>(), 0.0214, 1e-12);
  EXPECT_TRUE(summary["tpot_mean_s"].is_null());
  // With nothing generated the first token is the whole execution and the
  // result has no bits: TTFT = finish + 15 ms of latency - arrival = makespan.
  for (const auto& row : test::read_csv(last_output_ / "requests.csv")) {
    EXPECT_EQ(row.at("ttft_s"), row.at("makespan_s")) << row.at("id");
    EXPECT_EQ(test::ns_of(row.at("response_s")) - test::ns_of(row.at("finish_s")), 15'000'000);
  }

  // The synthetic workload draws sizes with a mean of zero generated tokens.
  const fs::path output = dir_ / "compare";
  const auto r =
      test::run_cli({"run", "--trace", trace, "--output", output.string(), "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json both = json::parse(test::read_file(output / "summary.json"));
  expect_finite(both["synthetic"], {"tpot_*"});
  expect_conserved(both["synthetic"], both["synthetic"]["requests"].get<double>() +
                                          both["synthetic"]["dropped"].get<double>());
}

TEST_F(Extreme, OneRequestRunsRecordedButHasNoMeanRateToCompare) {
  const std::string trace = trace_file("2024-01-01 00:00:00,100,10\n");
  const json summary = run(trace);
  expect_finite(summary);
  expect_conserved(summary, 1);
  EXPECT_EQ(summary["requests"], 1);
  EXPECT_EQ(summary["waiting_total_s"], 0);
  // 1200 + 20000 MI: 353 333 333 ns; first token 3200 MI: 53 333 333 ns; up
  // 15e6 + 2462 + 3200 ns (3200 bits), down 15e6 + 246 + 320 ns (320 bits).
  const auto rows = test::read_csv(last_output_ / "requests.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(test::ns_of(rows[0].at("start_s")), 15'005'662);
  EXPECT_EQ(test::ns_of(rows[0].at("finish_s")), 368'338'995);
  EXPECT_EQ(test::ns_of(rows[0].at("response_s")), 383'339'561);
  EXPECT_EQ(test::ns_of(rows[0].at("ttft_s")), 83'338'995);  // start + 53 333 333 + 15e6
  // T is the last arrival, 0, rounded up to a minute: 0; the run ends with
  // the response.
  EXPECT_EQ(summary["run_length_s"], 0);
  EXPECT_NEAR(summary["end_s"].get<double>(), 0.383339561, 1e-12);

  const fs::path output = dir_ / "compare";
  const auto r = test::run_cli({"run", "--trace", trace, "--output", output.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("rate"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(output));
}

// 2000 equal requests at one instant on 4 cores: (600, 3) tokens, 7200 +
// 6000 MI = 0.22 s each, first token 9200 MI = 153 333 333 ns; 19 200 bits up
// (15e6 + 14 769 + 19 200 = 15 033 969 ns), 96 down (15e6 + 74 + 96 =
// 15 000 170 ns); budget 2.3 s. They are issued in file order and the cores
// free in turns, so request k starts at 0.015033969 + floor(k / 4) x 0.22 s.
TEST_F(Extreme, EveryRequestAtTheSameInstant) {
  std::string rows;
  for (int i = 0; i < 2000; ++i)
    rows += "2024-01-01 00:00:00.5,600,3\n";
  const json summary = run(trace_file(rows), {"--cores", "4"});
  expect_finite(summary);
  expect_conserved(summary, 2000);
  EXPECT_EQ(summary["requests"], 2000);
  const auto requests = test::read_csv(last_output_ / "requests.csv");
  ASSERT_EQ(requests.size(), 2000u);
  for (std::int64_t k = 0; k < 2000; ++k) {
    const std::int64_t start = 15'033'969 + k / 4 * 220'000'000;
    ASSERT_EQ(test::ns_of(requests[k].at("start_s")), start) << k;
    ASSERT_EQ(test::ns_of(requests[k].at("wait_s")), k / 4 * 220'000'000) << k;
    ASSERT_EQ(test::ns_of(requests[k].at("response_s")), start + 220'000'000 + 15'000'170) << k;
  }
  // Waits 0.22 j s, j = 0 ... 499, four of each: 4 x 0.22 x 124 750.
  EXPECT_NEAR(summary["waiting_total_s"].get<double>(), 109'780, 1e-6);
  EXPECT_NEAR(summary["avg_wait_s"].get<double>(), 54.89, 1e-9);
  // Sorted waits v_i = 0.22 floor(i / 4): p50 at 999.5 between 0.22 x 249 and
  // 0.22 x 250; p99 at 1979.01 between 0.22 x 494 and 0.22 x 495.
  EXPECT_NEAR(summary["wait_p50_s"].get<double>(), 54.89, 1e-9);
  EXPECT_NEAR(summary["wait_p99_s"].get<double>(), 108.6822, 1e-9);
  // Makespan 0.030034139 + 0.22 (j + 1) <= 2.3 for j <= 9: 40 met.
  EXPECT_EQ(summary["deadline_met"], 40);
  EXPECT_NEAR(summary["avg_makespan_ok_s"].get<double>(), 0.030034139 + 0.22 * 5.5, 1e-9);
  EXPECT_NEAR(summary["compute_s"].get<double>(), 440, 1e-9);
  // The last response, T being 0: 0.030034139 + 500 x 0.22.
  EXPECT_NEAR(summary["end_s"].get<double>(), 110.030034139, 1e-9);
  EXPECT_NEAR(summary["utilization"].get<double>(), 440 / (4 * 110.030034139), 1e-12);
}

TEST_F(Extreme, ADurationOfZeroDropsAllButTheFirstInstant) {
  const std::string trace = trace_file(
      "2024-01-01 00:00:00,100,10\n2024-01-01 00:00:00,10,1\n2024-01-01 00:00:02,100,10\n");
  const json summary = run(trace, {"--duration", "0"});
  expect_finite(summary);
  expect_conserved(summary, 3);
  EXPECT_EQ(summary["run_length_s"], 0);
  // Arrivals 0, 0 and 2 s against T = 0: only t > T is dropped.
  EXPECT_EQ(summary["requests"], 2);
  EXPECT_EQ(summary["dropped"], 1);
  const auto rows = test::read_csv(last_output_ / "requests.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("context_tokens"), "100");
  EXPECT_EQ(rows[1].at("context_tokens"), "10");
  // (100, 10): 21200 MI = 353 333 333 ns, up 15 005 662, down 15 000 566:
  // responds at 0.383339561. (10, 1): 2120 MI = 35 333 333 ns, up 15 000 566,
  // down 15 000 057: responds at 0.065333956. The run ends at the later.
  EXPECT_EQ(test::ns_of(rows[0].at("response_s")), 383'339'561);
  EXPECT_EQ(test::ns_of(rows[1].at("response_s")), 65'333'956);
  EXPECT_NEAR(summary["end_s"].get<double>(), 0.383339561, 1e-12);
  EXPECT_NEAR(summary["compute_s"].get<double>(), 0.388666666, 1e-12);
  EXPECT_NEAR(summary["utilization"].get<double>(), 0.388666666 / (8 * 0.383339561), 1e-12);
  EXPECT_EQ(summary["deadline_met"], 2);
}

TEST_F(Extreme, AMillionRequestsSummaryOnly) {
  // One hour tiled with a small pattern of sizes, an arrival every 3.6 ms.
  constexpr int kRequests = 1'000'000;
  std::string text = kHeader;
  text.reserve(40u * kRequests);
  static constexpr int kContext[] = {374, 2048, 12, 900, 5000};
  static constexpr int kGenerated[] = {44, 0, 300, 7, 120};
  char line[64];
  for (int i = 0; i < kRequests; ++i) {
    const long us = 3600L * i;  // microseconds since the hour began
    std::snprintf(line, sizeof(line), "2024-01-01 %02ld:%02ld:%02ld.%06ld,%d,%d\n",
                  us / 3'600'000'000L, us / 60'000'000L % 60, us / 1'000'000L % 60, us % 1'000'000L,
                  kContext[i % 5], kGenerated[i % 7 % 5]);
    text += line;
  }
  const std::string trace = test::write_file(dir_ / "million.csv", text).string();
  text.clear();
  const json summary = run(trace, {"--per-request", "none", "--cores", "64"});
  expect_finite(summary, {"avg_makespan_ok_s"});
  expect_conserved(summary, kRequests);
  EXPECT_EQ(summary["requests"], kRequests);
  EXPECT_FALSE(fs::exists(last_output_ / "requests.csv"));
}

// Ten million requests through the model and every figure (the benchmarks
// time a file of them): an arrival every 3.6 ms for ten hours on 1024 cores
// (about 95 % busy), summary, serving figures, CDF and time series computed.
TEST(ExtremeScale, TenMillionRequestsInMemory) {
  constexpr std::uint64_t kRequests = 10'000'000;
  Settings settings;
  settings.cores = 1024;
  RequestList tasks(settings.request_knobs());
  tasks.reserve(kRequests);
  static constexpr double kContext[] = {374, 2048, 12, 900, 5000};
  static constexpr double kGenerated[] = {44, 0, 300, 7, 120};
  for (std::uint64_t i = 0; i < kRequests; ++i)
    tasks.add(SimTime::ns(static_cast<std::int64_t>(3'600'000 * i)), kContext[i % 5],
              kGenerated[i % 7 % 5]);
  const ModeResult r =
      simulate(settings, "recorded", std::move(tasks), SimTime::from_seconds(36000), 0, false);
  EXPECT_EQ(*r.summary.get("requests"), static_cast<double>(kRequests));
  EXPECT_EQ(*r.summary.get("deadline_met") + *r.summary.get("deadline_missed"),
            static_cast<double>(kRequests));
  EXPECT_EQ(r.events, kRequests);  // an issue a request: the edge server decides there
  for (const Figure& f : r.summary.figures()) {
    if (f.value) {
      EXPECT_TRUE(std::isfinite(*f.value)) << f.key;
    }
  }
  std::uint64_t arrivals = 0;
  for (const TimeSlice& slice : r.time_series.slices)
    arrivals += slice.arrivals;
  EXPECT_EQ(arrivals, kRequests);
  EXPECT_EQ(r.latency_cdf.fraction.size(), 1001u);
}

}  // namespace
}  // namespace infersim
