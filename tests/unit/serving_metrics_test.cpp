// The serving figures on hand-computed cases: TPOT, throughput over the
// benchmark duration, peak concurrency at equal times, goodput, and the keys
// they add to a summary.
#include "report/serving_metrics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli/run_options.hpp"
#include "core/input_error.hpp"
#include "core/percentiles.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;

SimTime at(double s) {
  return SimTime::from_seconds(s);
}

// A request issued at `arrival_s` whose first token reaches the device at
// `first_token_s` and whose response at `response_s`.
struct Timing {
  double arrival_s, first_token_s, response_s, generated;
  double wait_s = 0;
};

void feed(ServingMetrics& metrics, const std::vector<Timing>& requests) {
  std::uint64_t id = 0;
  for (const Timing& r : requests) {
    infersim::Request task = make_request(at(r.arrival_s), 100, r.generated, RequestKnobs{});
    RequestOutcome o;
    o.server_arrival = at(r.arrival_s);
    o.start = at(r.arrival_s + r.wait_s);
    o.finish = at(r.response_s);
    o.first_token = at(r.first_token_s);
    o.response = at(r.response_s);
    metrics.on_request(id++, task, o);
  }
}

TEST(ServingMetrics, TpotLeavesOutRequestsOfOneToken) {
  ServingMetrics metrics({{50}, std::nullopt});
  feed(metrics, {{0, 1, 3, 5},    // (3 - 1) / (5 - 1) = 0.5
                 {0, 2, 2.5, 3},  // (2.5 - 2) / (3 - 1) = 0.25
                 {0, 4, 4, 1}});  // one token: no TPOT
  Summary s;
  metrics.append_to(s);
  EXPECT_DOUBLE_EQ(*s.get("tpot_mean_s"), 0.375);
  EXPECT_DOUBLE_EQ(*s.get("tpot_p50_s"), 0.375);
  EXPECT_DOUBLE_EQ(*s.get("ttft_mean_s"), (1 + 2 + 4) / 3.0);
  EXPECT_DOUBLE_EQ(*s.get("e2el_mean_s"), (3 + 2.5 + 4) / 3.0);
  EXPECT_DOUBLE_EQ(*s.get("e2el_p50_s"), 3);
}

TEST(ServingMetrics, TpotWorkedOutAtTheEndFromTheTaskListIsTheSameAsKept) {
  // Mean sizes (real token counts) and whole ones, some of one token.
  RequestList tasks;
  std::vector<RequestOutcome> outcomes;
  for (int i = 0; i < 5000; ++i) {
    const double generated = i % 7 == 0 ? 1 : i % 2 == 0 ? 27.883 : 1 + i % 50;
    tasks.add(at(i * 0.01), 100, generated);
    RequestOutcome o;
    o.server_arrival = at(i * 0.01);
    o.start = o.server_arrival + Duration::ns(i % 13 * 1000);
    o.first_token = o.start + Duration::ns(1'000'000 + i % 17 * 12345);
    o.response = o.first_token + Duration::ns(i % 101 * 987'654);
    o.finish = o.response;
    outcomes.push_back(o);
  }
  ServingMetrics kept({{10, 50, 99.9}, std::nullopt});
  ServingMetrics derived({{10, 50, 99.9}, std::nullopt}, tasks.size(), &tasks);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    kept.on_request(i, tasks[i], outcomes[i]);
    derived.on_request(i, tasks[i], outcomes[i]);
  }
  Summary a, b;
  kept.append_to(a);
  derived.append_to(b);
  for (const char* key : {"tpot_mean_s", "tpot_p10_s", "tpot_p50_s", "tpot_p99.9_s"}) {
    ASSERT_TRUE(a.get(key).has_value()) << key;
    EXPECT_EQ(*a.get(key), *b.get(key)) << key;
  }
  ServingMetrics out_of_order({}, 2, &tasks);
  EXPECT_THROW(out_of_order.on_request(1, tasks[1], outcomes[1]), std::logic_error);
}

TEST(ServingMetrics, PreparedOnTwoThreadsOrReadAsNeededTheFiguresAreTheSame) {
  RequestList tasks;
  std::vector<RequestOutcome> outcomes;
  for (std::uint64_t i = 0; i < ServingMetrics::kPrepareOnTwoThreadsFrom + 7; ++i) {
    tasks.add(SimTime::ns(static_cast<std::int64_t>(i * 1000)), 100, 1 + i % 9);
    RequestOutcome o;
    o.server_arrival = tasks.arrival(i);
    o.start = o.server_arrival + Duration::ns(static_cast<std::int64_t>(i * 7919 % 100000));
    o.first_token = o.start + Duration::ns(static_cast<std::int64_t>(500 + i % 31));
    o.response = o.first_token + Duration::ns(static_cast<std::int64_t>(i * 104729 % 999983));
    o.finish = o.response;
    outcomes.push_back(o);
  }
  std::vector<Summary> summaries(3);
  std::vector<LatencyCdf> cdfs(3);
  for (int way = 0; way < 3; ++way) {
    ServingMetrics metrics({{25, 50, 99}, std::nullopt}, tasks.size(), &tasks);
    for (std::size_t i = 0; i < tasks.size(); ++i)
      metrics.on_request(i, tasks[i], outcomes[i]);
    if (way > 0) {
      EXPECT_EQ(metrics.prepare(way == 2), way == 2);  // the path taken
    }
    metrics.append_to(summaries[way]);
    cdfs[way] = metrics.cdf();
  }
  for (int way = 1; way < 3; ++way) {
    ASSERT_EQ(summaries[way].figures().size(), summaries[0].figures().size());
    for (std::size_t f = 0; f < summaries[0].figures().size(); ++f) {
      EXPECT_EQ(summaries[way].figures()[f].value, summaries[0].figures()[f].value)
          << summaries[0].figures()[f].key;
    }
    EXPECT_EQ(cdfs[way].wait_s, cdfs[0].wait_s);
    EXPECT_EQ(cdfs[way].ttft_s, cdfs[0].ttft_s);
  }
  ServingMetrics none;
  none.prepare(true);
  Summary empty;
  none.append_to(empty);
  EXPECT_FALSE(empty.get("ttft_p50_s").has_value());
}

TEST(ServingMetrics, TpotDoesNotExistWithoutATwoTokenRequest) {
  ServingMetrics metrics;
  feed(metrics, {{0, 1, 1, 1}, {0, 1, 1, 0}});
  Summary s;
  metrics.append_to(s);
  EXPECT_FALSE(s.get("tpot_mean_s").has_value());
  EXPECT_FALSE(s.get("tpot_p99_s").has_value());
}

TEST(ServingMetrics, ThroughputRunsFromTheFirstArrivalToTheLastResponse) {
  ServingMetrics metrics;
  feed(metrics, {{1, 2, 3, 10}, {2, 3, 9, 20}, {4, 5, 6, 30}});
  Summary s;
  metrics.append_to(s);
  EXPECT_DOUBLE_EQ(*s.get("benchmark_duration_s"), 8);
  EXPECT_DOUBLE_EQ(*s.get("request_throughput_rps"), 3.0 / 8);
  EXPECT_DOUBLE_EQ(*s.get("output_throughput_tps"), 60.0 / 8);
  EXPECT_DOUBLE_EQ(*s.get("total_token_throughput_tps"), 360.0 / 8);
  EXPECT_DOUBLE_EQ(*s.get("total_input_tokens"), 300);
  EXPECT_DOUBLE_EQ(*s.get("total_output_tokens"), 60);
}

// Gaps under and over 2^32 ns (kept apart, in 32 and 64 bits) against
// `percentile` of them all in one array, and their mean summed in the order
// they came.
TEST(ServingMetrics, ItlFiguresAreThoseOfEveryGapWhateverItsSize) {
  ServingMetricsKnobs knobs{{10, 50, 90, 99}, std::nullopt};
  knobs.server_token_instants = true;
  ServingMetrics metrics(knobs);
  const std::int64_t big = std::int64_t{1} << 32;
  const std::vector<std::int64_t> ns = {7,          big + 3, 20'000'000, big - 1,    0,       big,
                                        12'345'678, 5 * big, 9,          20'000'000, big + 1, 1};
  std::vector<Duration> gaps;
  for (const std::int64_t g : ns)
    gaps.push_back(Duration::ns(g));
  metrics.on_token_gaps(std::span<const Duration>(gaps).first(5));
  metrics.on_token_gaps(std::span<const Duration>(gaps).subspan(5));
  feed(metrics, {{0, 1, 3, 5}});
  Summary s;
  metrics.append_to(s);
  double sum = 0;
  std::vector<double> seconds;
  for (const std::int64_t g : ns) {
    sum += Duration::ns(g).seconds();
    seconds.push_back(Duration::ns(g).seconds());
  }
  EXPECT_EQ(*s.get("itl_mean_s"), sum / static_cast<double>(ns.size()));
  for (const double p : knobs.percentiles) {
    std::vector<double> all = seconds;
    EXPECT_EQ(*s.get(percentile_key("itl", p)), *percentile(all, p / 100)) << p;
  }
  EXPECT_GT(*s.get("itl_p99_s"), 4.3);  // a gap over 2^32 ns
}

TEST(ServingMetrics, NoRequestsGiveNullsNotNaN) {
  ServingMetrics metrics({{50, 99}, GoodputBounds{100.0, std::nullopt, std::nullopt}});
  Summary s;
  metrics.append_to(s);
  for (const char* key :
       {"ttft_mean_s", "ttft_p50_s", "tpot_mean_s", "e2el_p99_s", "benchmark_duration_s",
        "request_throughput_rps", "goodput_rps", "good_request_fraction"}) {
    EXPECT_FALSE(s.get(key).has_value()) << key;
  }
  EXPECT_EQ(*s.get("max_concurrent_requests"), 0);
  EXPECT_EQ(*s.get("good_requests"), 0);
}

// The reference the counting as requests come is checked against: the largest
// number of intervals [from, to) open at one instant, by a sweep over every
// start (+1) and end (-1); at equal times, intervals end before others begin.
std::uint64_t peak_concurrency(std::vector<std::pair<SimTime, SimTime>> intervals) {
  // +1 at each start, -1 at each end; at equal times -1 sorts first.
  std::vector<std::pair<std::int64_t, int>> events;
  events.reserve(2 * intervals.size());
  for (const auto& [from, to] : intervals) {
    events.emplace_back(from.count_ns(), +1);
    events.emplace_back(to.count_ns(), -1);
  }
  std::sort(events.begin(), events.end());
  std::int64_t level = 0;
  std::int64_t peak = 0;
  for (const auto& [time, delta] : events) {
    level += delta;
    peak = std::max(peak, level);
  }
  return static_cast<std::uint64_t>(peak);
}

TEST(PeakConcurrency, DeparturesComeBeforeArrivalsAtEqualTimes) {
  // At 2 s two requests end and two begin; at 3 s one ends and one begins.
  const std::vector<std::pair<SimTime, SimTime>> intervals = {
      {at(0), at(2)}, {at(1), at(2)}, {at(2), at(4)}, {at(2), at(3)}, {at(3), at(5)}};
  EXPECT_EQ(peak_concurrency(intervals), 2u);
  // A third overlapping request makes it 3.
  auto more = intervals;
  more.emplace_back(at(3.5), at(6));
  EXPECT_EQ(peak_concurrency(more), 3u);
  // An instant request never overlaps anything.
  EXPECT_EQ(peak_concurrency({{at(1), at(1)}, {at(1), at(1)}}), 0u);
  EXPECT_EQ(peak_concurrency({}), 0u);
}

// The figure is counted as requests come (a heap of responses); on random
// requests in arrival order, with many equal instants, it must equal the sweep
// over every interval.
TEST(ServingMetrics, MaxConcurrentRequestsAsTheyComeEqualsTheSweep) {
  std::uint64_t state = 99;
  auto next = [&](int range) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(range));
  };
  for (int round = 0; round < 50; ++round) {
    ServingMetrics metrics;
    std::vector<Timing> requests;
    std::vector<std::pair<SimTime, SimTime>> intervals;
    int arrival = 0;
    for (int i = 0; i < 200; ++i) {
      arrival += next(3);                      // whole seconds: many ties
      const int response = arrival + next(6);  // sometimes an instant request
      requests.push_back({double(arrival), double(response), double(response), 2});
      intervals.emplace_back(at(arrival), at(response));
    }
    feed(metrics, requests);
    Summary s;
    metrics.append_to(s);
    EXPECT_EQ(*s.get("max_concurrent_requests"), static_cast<double>(peak_concurrency(intervals)))
        << round;
  }
}

TEST(ServingMetrics, RefusesRequestsOutOfArrivalOrder) {
  ServingMetrics metrics;
  EXPECT_THROW(feed(metrics, {{2, 3, 4, 5}, {1, 2, 3, 5}}), std::logic_error);
}

TEST(ServingMetrics, MaxConcurrentRequestsCountsFromArrivalToResponse) {
  ServingMetrics metrics;
  feed(metrics, {{0, 1, 2, 5}, {1, 1.5, 2, 5}, {2, 3, 4, 5}, {2, 2.5, 3, 5}});
  Summary s;
  metrics.append_to(s);
  EXPECT_EQ(*s.get("max_concurrent_requests"), 2);
}

TEST(ServingMetrics, GoodRequestsMeetEveryBoundGiven) {
  GoodputBounds bounds;
  bounds.ttft_ms = 1000;
  bounds.tpot_ms = 400;
  bounds.e2el_ms = 3000;
  ServingMetrics metrics({{50}, bounds});
  feed(metrics, {
                    {0, 1, 3, 5},      // TTFT 1 s and E2E 3 s meet (inclusive), TPOT 0.5 s fails
                    {0, 0.5, 1, 1},    // one token meets any TPOT bound: good
                    {0, 2, 2.1, 3},    // TTFT 2 s fails
                    {1, 1.2, 3.8, 8},  // TPOT 2.6/7 = 0.371 s, E2E 2.8 s: good
                });
  Summary s;
  metrics.append_to(s);
  EXPECT_EQ(*s.get("good_requests"), 2);
  EXPECT_DOUBLE_EQ(*s.get("good_request_fraction"), 0.5);
  EXPECT_DOUBLE_EQ(*s.get("goodput_rps"), 2 / 3.8);
}

TEST(ServingMetrics, OneBoundAloneJudgesAlone) {
  ServingMetrics metrics({{50}, GoodputBounds{std::nullopt, std::nullopt, 2000.0}});
  feed(metrics, {{0, 1, 3, 5}, {0, 1.9, 2, 5}, {0, 0.1, 2.000000001, 5}});
  Summary s;
  metrics.append_to(s);
  EXPECT_EQ(*s.get("good_requests"), 1);
}

TEST(ServingMetrics, WithoutBoundsThereAreNoGoodputFigures) {
  ServingMetrics metrics;
  feed(metrics, {{0, 1, 3, 5}});
  Summary s;
  metrics.append_to(s);
  EXPECT_THROW(s.get("goodput_rps"), std::out_of_range);
  EXPECT_THROW(s.get("good_requests"), std::out_of_range);
}

TEST(ServingMetrics, KeysFollowWhatTheSummaryHoldsAndNeverRepeatOne) {
  Summary s;
  s.add("ttft_p50_s", 123.0);  // as SummaryCollector writes it
  s.add("end_s", 9.0);
  ServingMetrics metrics({{50, 75, 99.9}, std::nullopt});
  feed(metrics, {{0, 1, 2, 5}, {0, 2, 3, 5}, {0, 3, 4, 5}, {0, 4, 5, 5}, {0, 5, 6, 5}});
  metrics.append_to(s);
  std::vector<std::string> keys;
  for (const Figure& f : s.figures())
    keys.push_back(f.key);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "ttft_p50_s"), 1);
  EXPECT_EQ(keys[0], "ttft_p50_s");
  EXPECT_EQ(*s.get("ttft_p50_s"), 123.0);  // left as it was
  EXPECT_EQ(keys[1], "end_s");
  EXPECT_EQ(keys[2], "ttft_mean_s");
  EXPECT_EQ(keys[3], "ttft_p75_s");
  EXPECT_EQ(keys[4], "ttft_p99.9_s");
  EXPECT_DOUBLE_EQ(*s.get("ttft_p75_s"), 4);
  EXPECT_DOUBLE_EQ(*s.get("ttft_p99.9_s"), 4.996);
  EXPECT_TRUE(s.get("wait_p75_s").has_value());
}

TEST(ServingMetrics, PercentileKeysUseTheShortestForm) {
  EXPECT_EQ(percentile_key("ttft", 50), "ttft_p50_s");
  EXPECT_EQ(percentile_key("e2el", 99.9), "e2el_p99.9_s");
  EXPECT_EQ(percentile_key("wait", 12.5), "wait_p12.5_s");
}

TEST(ServingMetrics, CdfHoldsEveryRequestWhenTheyAreFew) {
  ServingMetrics metrics;
  feed(metrics, {{0, 3, 4, 5, 0.5}, {0, 1, 2, 5, 0}, {0, 2, 3, 5, 2}});
  const LatencyCdf cdf = metrics.cdf();
  EXPECT_EQ(cdf.fraction, (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(cdf.ttft_s, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(cdf.wait_s, (std::vector<double>{0, 0.5, 2}));
  EXPECT_EQ(cdf.e2el_s, (std::vector<double>{2, 3, 4}));  // response - arrival
}

TEST(ServingMetrics, CdfOfManyRequestsIsEvenlySpacedPercentiles) {
  ServingMetrics metrics;
  std::vector<Timing> many;
  for (int i = 0; i < 5000; ++i)
    many.push_back({0, 1 + i * 0.001, 10, 5});
  feed(metrics, many);
  const LatencyCdf cdf = metrics.cdf(101);
  ASSERT_EQ(cdf.fraction.size(), 101u);
  EXPECT_DOUBLE_EQ(cdf.fraction[50], 0.5);
  EXPECT_NEAR(cdf.ttft_s[50], 1 + 2499.5 * 0.001, 1e-9);
  EXPECT_DOUBLE_EQ(cdf.ttft_s.front(), 1);
  EXPECT_NEAR(cdf.ttft_s.back(), 1 + 4999 * 0.001, 1e-9);
}

// vLLM's peak: the most tokens reaching the devices in one second counted
// from the first arrival, a request's tokens evenly spaced from its first
// token to its response.
TEST(ServingMetrics, PeakOutputThroughputIsTheMostTokensInOneSecond) {
  ServingMetrics metrics;
  // Arrivals from 0.25 s, so the seconds are [0.25, 1.25), [1.25, 2.25), ...
  feed(metrics, {
                    // 5 tokens at 0.5, 1.0, 1.5, 2.0, 2.5: 2 in the first second,
                    // 2 in the second, 1 in the third.
                    {0.25, 0.5, 2.5, 5},
                    // 3 tokens at 1.5, 2.0, 2.5: 2 in the second, 1 in the third.
                    {1.0, 1.5, 2.5, 3},
                    // One token at 2.2: the second.
                    {2.0, 2.2, 2.2, 1},
                    // No token.
                    {2.1, 2.3, 2.3, 0},
                });
  Summary s;
  metrics.append_to(s);
  // Seconds: [0.25, 1.25) 2; [1.25, 2.25) 1.5 2.0 | 1.5 2.0 | 2.2 = 5;
  // [2.25, 3.25) 2.5 | 2.5 = 2.
  EXPECT_EQ(*s.get("peak_output_throughput_tps"), 5);
}

TEST(ServingMetrics, PeakOutputThroughputCountsTokensAtTheSecondsBounds) {
  ServingMetrics metrics;
  // 11 tokens from 1 s to 2 s, 0.1 s apart: 10 in [1, 2), the last at 2 in
  // the next second; a second request's 4 tokens from 2 s to 2.3 s join it.
  feed(metrics, {{0, 1, 2, 11}, {1.5, 2, 2.3, 4}});
  Summary s;
  metrics.append_to(s);
  EXPECT_EQ(*s.get("peak_output_throughput_tps"), 10);
  ServingMetrics more;
  feed(more, {{0, 1, 2, 11}, {1.5, 2, 2.3, 10}});  // 1 + 10 in [2, 3)
  Summary t;
  more.append_to(t);
  EXPECT_EQ(*t.get("peak_output_throughput_tps"), 11);
}

TEST(GoodputFlag, ReadsVllmSyntax) {
  EXPECT_EQ(parse_goodput("ttft:500 e2el:2000", "--goodput"),
            nlohmann::json({{"ttft_ms", 500.0}, {"e2el_ms", 2000.0}}));
  EXPECT_EQ(parse_goodput("tpot:50,ttft:0.5", "--goodput"),
            nlohmann::json({{"tpot_ms", 50.0}, {"ttft_ms", 0.5}}));
  EXPECT_TRUE(parse_goodput("none", "--goodput").is_null());
}

// aiperf names the same bounds by its metrics: time_to_first_token,
// inter_token_latency ((e2e - ttft) / (generated - 1), vLLM's TPOT) and
// request_latency, in milliseconds.
TEST(GoodputFlag, ReadsAiperfNames) {
  EXPECT_EQ(parse_goodput("time_to_first_token:100 inter_token_latency:3.40", "--goodput"),
            nlohmann::json({{"ttft_ms", 100.0}, {"tpot_ms", 3.4}}));
  EXPECT_EQ(parse_goodput("request_latency:2000,ttft:500", "--goodput"),
            nlohmann::json({{"e2el_ms", 2000.0}, {"ttft_ms", 500.0}}));
  EXPECT_THROW(parse_goodput("ttft:1 time_to_first_token:2", "--goodput"), InputError);
  EXPECT_THAT(test::error_of([] { parse_goodput("request_latncy:5", "--goodput"); }),
              HasSubstr("did you mean request_latency?"));
}

TEST(GoodputFlag, BadWordsAreNamed) {
  auto message = [](const std::string& text) {
    return test::error_of([&] { parse_goodput(text, "--goodput"); });
  };
  EXPECT_THAT(message("ttft=500"), HasSubstr("--goodput: expected NAME:MS"));
  EXPECT_THAT(message("ttfb:500"), HasSubstr("did you mean ttft?"));
  EXPECT_THAT(message("ttft:soon"), HasSubstr("milliseconds as a number"));
  EXPECT_THAT(message("ttft:1 ttft:2"), HasSubstr("ttft is given twice"));
  EXPECT_THAT(message(""), HasSubstr("expected bounds"));
}

TEST(PercentilesFlag, ReadsACommaSeparatedList) {
  EXPECT_EQ(parse_percentiles("50,90,99.9", "--metric-percentiles"),
            nlohmann::json({50.0, 90.0, 99.9}));
  EXPECT_THROW(parse_percentiles("50,ninety", "--metric-percentiles"), InputError);
}

constexpr const char* kServingTrace =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2024-01-01 00:00:00.000,1000,10\n"
    "2024-01-01 00:00:00.250,500,1\n"
    "2024-01-01 00:00:00.300,2000,20\n"
    "2024-01-01 00:00:01.500,2000,20\n";

class ServingFigures : public test::TraceFolder {
 protected:
  ServingFigures() : TraceFolder(kServingTrace) {}
  test::CliResult run(std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--plots", "none", "--force"});
    return run_on_trace({"run", "--recorded"}, "run", extra);
  }
  nlohmann::ordered_json summary() {
    return nlohmann::ordered_json::parse(test::read_file(dir_ / "run" / "summary.json"));
  }
};

TEST_F(ServingFigures, OutputKeysComeFirstInTheirOrderThenTheServingOnes) {
  const auto r = run({});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> contract = {
      "requests",       "dropped",           "deadline_met", "deadline_missed",
      "success_rate",   "compute_s",         "avg_exec_s",   "waiting_total_s",
      "avg_wait_s",     "avg_makespan_ok_s", "avg_budget_s", "makespan_p50_s",
      "makespan_p90_s", "makespan_p99_s",    "ttft_p50_s",   "ttft_p90_s",
      "ttft_p99_s",     "wait_p50_s",        "wait_p99_s",   "utilization",
      "traffic_mb",     "energy_wh",         "run_length_s", "end_s"};
  const auto s = summary();
  std::vector<std::string> keys;
  for (const auto& [key, value] : s.items())
    keys.push_back(key);
  ASSERT_GT(keys.size(), contract.size());
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 24), contract);
  const std::vector<std::string> added(keys.begin() + 24, keys.end());
  EXPECT_EQ(added,
            (std::vector<std::string>{
                "ttft_mean_s", "tpot_mean_s", "tpot_p50_s", "tpot_p90_s", "tpot_p99_s",
                "e2el_mean_s", "e2el_p50_s", "e2el_p90_s", "e2el_p99_s", "wait_mean_s",
                "wait_p90_s", "benchmark_duration_s", "total_input_tokens", "total_output_tokens",
                "request_throughput_rps", "output_throughput_tps", "total_token_throughput_tps",
                "max_concurrent_requests", "peak_output_throughput_tps"}));
  EXPECT_EQ(s["e2el_p50_s"], s["makespan_p50_s"]);
  EXPECT_EQ(s["wait_mean_s"], s["avg_wait_s"]);
  EXPECT_THAT(r.out, HasSubstr("Median TTFT (ms):"));
  EXPECT_THAT(r.out, HasSubstr("Peak concurrent requests:"));
}

TEST_F(ServingFigures, GoodputFlagTakesOneStringSeveralWordsOrRepeats) {
  ASSERT_EQ(run({"--goodput", "ttft:500 e2el:2000"}).status, 0);
  const auto one_string = summary();
  ASSERT_TRUE(one_string.contains("goodput_rps"));
  ASSERT_EQ(run({"--goodput", "ttft:500", "e2el:2000"}).status, 0);
  EXPECT_EQ(summary()["good_requests"], one_string["good_requests"]);
  ASSERT_EQ(run({"--goodput", "ttft:500", "--goodput", "e2el:2000"}).status, 0);
  EXPECT_EQ(summary()["good_requests"], one_string["good_requests"]);
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings["report"]["goodput"],
            nlohmann::json({{"ttft_ms", 500.0}, {"e2el_ms", 2000.0}}));
  // settings.json runs it again, goodput and all
  const auto before = test::read_file(dir_ / "run" / "summary.json");
  test::write_file(dir_ / "s.json", test::read_file(dir_ / "run" / "settings.json"));
  const auto again = test::run_cli(
      {"run", "--settings", (dir_ / "s.json").string(), "--output", (dir_ / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(test::read_file(dir_ / "again" / "summary.json"), before);
  EXPECT_THAT(run({"--goodput", "ttft:-1"}).err,
              HasSubstr("--goodput.ttft_ms: must be at least 0"));
}

TEST_F(ServingFigures, GoodputCountsAgainstTheBoundsGiven) {
  // A bound no request can meet, and one every request meets.
  ASSERT_EQ(run({"--goodput", "ttft:0"}).status, 0);
  EXPECT_EQ(summary()["good_requests"], 0);
  EXPECT_EQ(summary()["goodput_rps"], 0.0);
  ASSERT_EQ(run({"--goodput", "e2el:1000000"}).status, 0);
  EXPECT_EQ(summary()["good_requests"], 4);
  EXPECT_EQ(summary()["good_request_fraction"], 1.0);
  EXPECT_EQ(summary()["goodput_rps"], summary()["request_throughput_rps"]);
}

TEST_F(ServingFigures, PercentilesFlagSetsTheKeys) {
  const auto r = run({"--metric-percentiles", "25,99,99.9"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto s = summary();
  EXPECT_TRUE(s.contains("ttft_p25_s"));
  EXPECT_TRUE(s.contains("e2el_p99.9_s"));
  EXPECT_TRUE(s.contains("ttft_p90_s"));   // OUTPUT.md's, always there
  EXPECT_FALSE(s.contains("e2el_p90_s"));  // not asked for
  EXPECT_THAT(run({"--metric-percentiles", "0,50"}).err,
              HasSubstr("--metric-percentiles: a percentile must be greater than 0"));
  EXPECT_THAT(run({"--metric-percentiles", "50,101"}).err, HasSubstr("at most 100"));
  EXPECT_THAT(run({"--metric-percentiles", "50,50"}).err, HasSubstr("listed twice"));
}

}  // namespace
}  // namespace infersim
