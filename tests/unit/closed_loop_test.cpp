// Closed-loop load (MODEL.md section 4b): the cap on requests in flight, the
// send instants it gives, warm-ups, pacing, vLLM's random dataset, the
// benchmark's figures and the refusals of what contradicts it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <pcg_random.hpp>

#include "model/batching_server.hpp"
#include "model/edge_server.hpp"
#include "model/simulation.hpp"
#include "report/closed_loop_beside.hpp"
#include "request/closed_loop_requests.hpp"
#include "scenario/scenario.hpp"
#include "studies/frontier.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;

// A replica whose every step costs 10 ms, whatever it holds.
BatchingKnobs constant_step_knobs() {
  BatchingKnobs k;
  k.max_num_seqs = 64;
  k.max_num_batched_tokens = 4096;
  k.block_tokens = 16;
  k.kv_blocks = 100'000;
  k.prefix_caching = false;
  k.step_base_s = 0.010;
  k.step_prefill_token_s = 0;
  k.step_prefill_pair_s = 0;
  k.step_decode_token_s = 0;
  k.step_decode_context_s = 0;
  return k;
}

// `n` requests of `prompt` tokens and `output` tokens, every arrival 0.
RequestList same_loop_requests(std::size_t n, double prompt, double output) {
  RequestList list;
  for (std::size_t k = 0; k < n; ++k)
    list.add(SimTime::zero(), prompt, output);
  return list;
}

// What the observers are told, by id.
struct LoopSeen : RequestObserver {
  void on_request(std::uint64_t id, const Request& request,
                  const RequestOutcome& outcome) override {
    ids.push_back(id);
    arrival.push_back(request.arrival);
    response.push_back(outcome.response);
    first_token.push_back(outcome.first_token);
    device.push_back(outcome.device);
  }
  std::vector<std::uint64_t> ids;
  std::vector<SimTime> arrival, response, first_token;
  std::vector<std::uint32_t> device;
};

// A step or busy span the server observers see.
struct LoopSteps : ServerObserver {
  void on_step(const StepRecord& s) override { starts.push_back(s.start); }
  std::vector<SimTime> starts;
};

struct LoopRun {
  LoopSeen seen;
  LoopSteps steps;
  RequestList requests;
};

void run_closed_loop(LoopRun& run, ClosedLoop loop,
                     const BatchingKnobs& knobs = constant_step_knobs()) {
  DeviceFleet fleet(static_cast<std::uint32_t>(loop.clients(run.requests.size())));
  const NetworkPath network({});
  BatchingServer server(knobs);
  Simulation simulation(run.requests, fleet, network, server, loop);
  simulation.add_observer(run.seen);
  simulation.add_server_observer(run.steps);
  simulation.run();
}

// The most requests in flight at once: sends and responses swept in time
// order, a response before a send at the same instant.
std::size_t most_loop_in_flight(const LoopSeen& seen) {
  std::vector<std::pair<SimTime, int>> events;
  for (std::size_t k = 0; k < seen.ids.size(); ++k) {
    events.push_back({seen.arrival[k], +1});
    events.push_back({seen.response[k], -1});
  }
  std::sort(events.begin(), events.end());
  std::int64_t now = 0, most = 0;
  for (const auto& [at, change] : events) {
    now += change;
    most = std::max(most, now);
  }
  return static_cast<std::size_t>(most);
}

// Each client waits for its last response before it sends again.
void expect_clients_wait(const LoopSeen& seen, std::uint32_t n) {
  std::vector<SimTime> free_at(n, SimTime::zero());
  for (std::size_t k = 0; k < seen.ids.size(); ++k) {
    ASSERT_LT(seen.device[k], n);
    EXPECT_GE(seen.arrival[k], free_at[seen.device[k]]) << k;
    free_at[seen.device[k]] = seen.response[k];
  }
}

// By hand: 2 clients, 10 requests of 8 prompt tokens and 5 output tokens, a
// step 10 ms. A pair is prefilled in one step (first tokens at 10 ms), then
// decoded a token a step: done at 50 ms, when the next pair is sent. TTFT 10
// ms, TPOT (50 - 10) / 4 = 10 ms, E2E 50 ms; 5 rounds in 250 ms: 40 req/s,
// 200 output tokens/s, 2 in flight on average.
TEST(ClosedLoop, AConstantStepGivesTheFiguresByArithmetic) {
  LoopRun run;
  run.requests = same_loop_requests(10, 8, 5);
  run_closed_loop(run, {2, 0});
  ASSERT_EQ(run.seen.ids.size(), 10u);
  for (std::size_t k = 0; k < 10; ++k) {
    const std::int64_t round_ns = static_cast<std::int64_t>(k / 2) * 50'000'000;
    EXPECT_EQ(run.seen.arrival[k].count_ns(), round_ns) << k;
    EXPECT_EQ((run.seen.first_token[k] - run.seen.arrival[k]).count_ns(), 10'000'000) << k;
    EXPECT_EQ((run.seen.response[k] - run.seen.arrival[k]).count_ns(), 50'000'000) << k;
    // The list keeps each send instant.
    EXPECT_EQ(run.requests.arrival(k), run.seen.arrival[k]);
  }
  EXPECT_EQ(run.seen.response.back().count_ns(), 250'000'000);

  // The same through the scenario: the benchmark's figures.
  Settings settings;
  settings.server_kind = "batching";
  settings.batching = constant_step_knobs();
  settings.hops.clear();
  settings.max_concurrency = 2;
  settings.mode = "recorded";
  const ModeResult r =
      simulate(settings, "recorded", same_loop_requests(10, 8, 5), SimTime::zero(), 0, false);
  const auto figure = [&](const std::string& key) { return r.summary.get(key).value_or(-1); };
  EXPECT_NEAR(figure("benchmark_duration_s"), 0.25, 1e-12);
  EXPECT_NEAR(figure("request_throughput_rps"), 40, 1e-9);
  EXPECT_NEAR(figure("output_throughput_tps"), 200, 1e-9);
  EXPECT_NEAR(figure("ttft_mean_s"), 0.010, 1e-12);
  EXPECT_NEAR(figure("tpot_mean_s"), 0.010, 1e-12);
  EXPECT_NEAR(figure("mean_in_flight"), 2, 1e-9);
  EXPECT_NEAR(figure("output_throughput_per_user_tps"), 100, 1e-6);
  EXPECT_NEAR(figure("output_throughput_per_gpu_tps"), 200, 1e-9);  // one replica
  EXPECT_EQ(figure("max_concurrency"), 2);
  EXPECT_EQ(r.run_length.count_ns(), 250'000'000);
}

// Never more than N in flight, and N reached; each request sent when the
// (k - N + 1)-th response came back, by the client that freed.
TEST(ClosedLoop, NeverMoreThanTheCapInFlight) {
  for (const std::uint32_t n : {1u, 3u, 8u}) {
    LoopRun run;
    pcg32 rng(7);
    for (int k = 0; k < 200; ++k)
      run.requests.add(SimTime::zero(), 1 + rng(300), 1 + rng(40));
    BatchingKnobs knobs = constant_step_knobs();
    knobs.step_prefill_token_s = 1e-5;
    knobs.step_decode_token_s = 1e-4;
    run_closed_loop(run, {n, 0}, knobs);
    ASSERT_EQ(run.seen.ids.size(), 200u);
    EXPECT_EQ(most_loop_in_flight(run.seen), n);
    std::vector<SimTime> responses = run.seen.response;
    std::sort(responses.begin(), responses.end());
    for (std::size_t k = 0; k < 200; ++k) {
      const SimTime expected = k < n ? SimTime::zero() : responses[k - n];
      EXPECT_EQ(run.seen.arrival[k], expected) << "n " << n << ", request " << k;
      EXPECT_LT(run.seen.device[k], n);
    }
    expect_clients_wait(run.seen, n);
  }
}

// The edge server under a closed loop (MODEL.md section 4b): N devices, each
// waiting for its last response, through the network both ways; the send
// instants follow the responses as on the batching server.
TEST(ClosedLoop, EdgeServerClientsAreDevicesThatWait) {
  LoopRun run;
  pcg32 rng(3);
  for (int k = 0; k < 300; ++k)
    run.requests.add(SimTime::zero(), 1 + rng(2000), 1 + rng(50));
  const std::uint32_t n = 5;
  DeviceFleet fleet(n);
  const NetworkPath network(default_hops());
  EdgeServer server(EdgeServerKnobs{.cores = 2});
  Simulation simulation(run.requests, fleet, network, server, {n, 0});
  simulation.add_observer(run.seen);
  simulation.run();
  ASSERT_EQ(run.seen.ids.size(), 300u);
  EXPECT_EQ(most_loop_in_flight(run.seen), n);
  expect_clients_wait(run.seen, n);
  std::vector<SimTime> responses = run.seen.response;
  std::sort(responses.begin(), responses.end());
  for (std::size_t k = n; k < 300; ++k)
    EXPECT_EQ(run.seen.arrival[k], responses[k - n]) << k;
}

// 300 requests of random sizes drawn from `seed`, paced at 5 a second (pacing
// seed 5), their pacing offsets in `paced`; a step of 20 ms plus 1 ms a
// decode.
std::vector<SimTime> paced_loop_requests(LoopRun& run, std::uint64_t seed) {
  pcg32 rng(seed);
  for (int k = 0; k < 300; ++k)
    run.requests.add(SimTime::zero(), 1 + rng(500), 1 + rng(60));
  pace_requests(run.requests, 5.0, 1, 5);
  std::vector<SimTime> paced;
  for (std::size_t k = 0; k < run.requests.size(); ++k)
    paced.push_back(run.requests.arrival(k));
  return paced;
}

BatchingKnobs paced_loop_knobs() {
  BatchingKnobs knobs = constant_step_knobs();
  knobs.step_base_s = 0.02;
  knobs.step_decode_token_s = 1e-3;
  return knobs;
}

// Paced and capped: each request goes at its pacing instant or when a client
// frees, whichever is later (vLLM bench's --request-rate with
// --max-concurrency).
TEST(ClosedLoop, PacedAndCappedGoesAtTheLaterOfTheTwo) {
  LoopRun run;
  const std::vector<SimTime> paced = paced_loop_requests(run, 11);
  const BatchingKnobs knobs = paced_loop_knobs();
  const std::uint32_t n = 4;
  run_closed_loop(run, {n, 0}, knobs);
  std::vector<SimTime> responses = run.seen.response;
  std::sort(responses.begin(), responses.end());
  std::size_t held = 0, on_time = 0;
  for (std::size_t k = 0; k < paced.size(); ++k) {
    const SimTime expected = k < n ? paced[k] : std::max(paced[k], responses[k - n]);
    EXPECT_EQ(run.seen.arrival[k], expected) << k;
    (run.seen.arrival[k] > paced[k] ? held : on_time) += 1;
  }
  // Both regimes occur: the test would pass vacuously otherwise.
  EXPECT_GT(held, 10u);
  EXPECT_GT(on_time, 10u);
  EXPECT_LE(most_loop_in_flight(run.seen), n);
}

// Paced with no cap (vLLM bench's --request-rate alone): every request goes
// at its pacing instant, after the warm-ups, all of which go at 0.
TEST(ClosedLoop, PacedWithNoCapGoesAtEveryPacingInstant) {
  LoopRun run;
  const std::vector<SimTime> paced = paced_loop_requests(run, 12);
  const BatchingKnobs knobs = paced_loop_knobs();
  ClosedLoop loop;
  loop.warmups = 3;
  loop.uncapped = true;
  run_closed_loop(run, loop, knobs);
  // The warm-ups, a client each, are sent at 0 together: one prefill step of
  // the 3 copies, then decode steps of them all; the measured start is their
  // common response.
  ASSERT_EQ(run.seen.ids.size(), paced.size());
  ASSERT_FALSE(run.steps.starts.empty());
  const std::int64_t t0 = run.seen.arrival.front().count_ns() - paced.front().count_ns();
  EXPECT_GT(t0, 0);
  for (std::size_t k = 0; k < paced.size(); ++k)
    EXPECT_EQ(run.seen.arrival[k].count_ns(), t0 + paced[k].count_ns()) << k;
  // More in flight than a cap of 4 would allow: the pace alone decides.
  EXPECT_GT(most_loop_in_flight(run.seen), 4u);
}

// Warm-ups run first, reported to no observer: the requests start when the
// last warm-up's response is in, and no step before it is seen.
TEST(ClosedLoop, WarmupsCountInNoFigure) {
  LoopRun run;
  run.requests = same_loop_requests(6, 8, 5);
  run_closed_loop(run, {2, 3});
  ASSERT_EQ(run.seen.ids.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k)
    EXPECT_EQ(run.seen.ids[k], k);
  // Warm-ups 0 and 1 from 0 to 50 ms, 2 from 50 to 100 ms.
  EXPECT_EQ(run.seen.arrival.front().count_ns(), 100'000'000);
  ASSERT_FALSE(run.steps.starts.empty());
  EXPECT_GE(run.steps.starts.front().count_ns(), 100'000'000);
  EXPECT_EQ(run.seen.response.back().count_ns(), 100'000'000 + 3 * 50'000'000);
}

// Little's law on a long run: request throughput x mean E2E = the mean in
// flight, which a closed loop holds at N but for its last requests.
TEST(ClosedLoop, LittlesLawHoldsOnALongRun) {
  Settings settings;
  settings.server_kind = "batching";
  settings.batching = constant_step_knobs();
  settings.batching.step_prefill_token_s = 2e-6;
  settings.batching.step_decode_token_s = 2e-5;
  settings.hops.clear();
  settings.max_concurrency = 16;
  settings.dataset = "random";
  settings.random_input_len = 512;
  settings.random_output_len = 64;
  settings.random_range_ratio = 0.5;
  settings.num_prompts = 4000;
  const RequestList requests =
      random_dataset(settings.random_dataset(), settings.request_knobs(), settings.seed);
  const ModeResult r = simulate(settings, "recorded", requests, SimTime::zero(), 0, false);
  const double throughput = *r.summary.get("request_throughput_rps");
  const double e2e = *r.summary.get("e2el_mean_s");
  EXPECT_NEAR(throughput * e2e / 16, 1, 0.01);
  EXPECT_NEAR(*r.summary.get("mean_in_flight") / (throughput * e2e), 1, 1e-9);
}

// vLLM's random dataset: lengths within [floor(I(1-R)), ceil(I(1+R))], their
// mean near I, the same draws from the same seed and others from another.
TEST(ClosedLoop, RandomDatasetLengthsRangeMeanAndSeed) {
  const RandomDataset d{1000, 200, 0.25, 20'000};
  const RequestList a = random_dataset(d, {}, 42);
  ASSERT_EQ(a.size(), 20'000u);
  double in_sum = 0, out_sum = 0, in_low = 1e9, in_high = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a.arrival(k), SimTime::zero());
    in_sum += a.context_tokens(k);
    out_sum += a.generated_tokens(k);
    in_low = std::min(in_low, a.context_tokens(k));
    in_high = std::max(in_high, a.context_tokens(k));
    ASSERT_GE(a.generated_tokens(k), 150);
    ASSERT_LE(a.generated_tokens(k), 250);
  }
  EXPECT_EQ(in_low, 750);  // both ends drawn
  EXPECT_EQ(in_high, 1250);
  EXPECT_NEAR(in_sum / 20'000, 1000, 3);
  EXPECT_NEAR(out_sum / 20'000, 200, 1);
  const RequestList same = random_dataset(d, {}, 42);
  const RequestList other = random_dataset(d, {}, 43);
  std::size_t differ = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(same.context_tokens(k), a.context_tokens(k));
    differ += other.context_tokens(k) != a.context_tokens(k);
  }
  EXPECT_GT(differ, 10'000u);
  // R = 0: every length exactly I and O.
  const RequestList exact = random_dataset({100, 7, 0, 50}, {}, 1);
  for (std::size_t k = 0; k < exact.size(); ++k) {
    EXPECT_EQ(exact.context_tokens(k), 100);
    EXPECT_EQ(exact.generated_tokens(k), 7);
  }
  EXPECT_EQ(length_range(3, 0.9).low, 1);  // never 0
}

// vLLM's pacing: the last request at exactly n / rate, in order.
TEST(ClosedLoop, PacingEndsAtNOverTheRate) {
  RequestList list = same_loop_requests(500, 10, 10);
  pace_requests(list, 25.0, 1, 3);
  for (std::size_t k = 1; k < list.size(); ++k)
    EXPECT_LE(list.arrival(k - 1), list.arrival(k));
  EXPECT_EQ(list.arrival(499).count_ns(), 20'000'000'000);
  EXPECT_GT(list.arrival(0), SimTime::zero());
  pace_requests(list, std::nullopt, 1, 3);
  EXPECT_EQ(list.arrival(499), SimTime::zero());
}

constexpr const char* kLoopTrace =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2024-01-01 00:00:00.000,100,10\n"
    "2024-01-01 00:00:00.250,50,5\n"
    "2024-01-01 00:01:30.500,200,20\n";

class ClosedLoopFlags : public test::TraceFolder {
 protected:
  ClosedLoopFlags() : TraceFolder(kLoopTrace) {}
  std::string refused(const std::vector<std::string>& extra) {
    const test::CliResult r =
        run_on_trace({"run", "--server", "batching", "--plots", "none"}, "run", extra);
    EXPECT_FALSE(std::filesystem::exists(dir_ / "run"));
    return test::one_error_line(r);
  }
};

TEST_F(ClosedLoopFlags, BadValuesAreRefusedNamingTheFlag) {
  EXPECT_THAT(refused({"--max-concurrency", "0"}),
              HasSubstr("--max-concurrency: must be at least 1"));
  EXPECT_THAT(
      refused({"--max-concurrency", "4", "--dataset-name", "random", "--random-range-ratio", "1"}),
      HasSubstr("--random-range-ratio: must be in [0, 1)"));
  EXPECT_THAT(
      refused({"--max-concurrency", "4", "--dataset-name", "random", "--random-input-len", "0"}),
      HasSubstr("--random-input-len: must be a whole number from 1"));
  EXPECT_THAT(
      refused({"--max-concurrency", "4", "--dataset-name", "random", "--start-offset", "10"}),
      HasSubstr("run.start_offset_s (--start-offset): contradicts client.dataset random"));
  EXPECT_THAT(refused({"--max-concurrency", "4", "--time-scale", "2"}),
              HasSubstr("run.time_scale (--time-scale): contradicts client.max_concurrency"));
  EXPECT_THAT(refused({"--num-prompts", "10"}),
              HasSubstr("client.num_prompts (--num-prompts): applies to the random dataset only"));
  EXPECT_THAT(refused({"--num-warmups", "2"}),
              HasSubstr("client.num_warmups (--num-warmups): applies to a benchmark's client"));
  EXPECT_THAT(refused({"--max-concurrency", "4", "--num-prompts", "10"}),
              HasSubstr("applies to the random dataset only"));
  EXPECT_THAT(refused({"--max-concurrency", "4", "--synthetic"}),
              HasSubstr("client.max_concurrency (--max-concurrency): a benchmark's client"));
  EXPECT_THAT(refused({"--request-rate", "4", "--synthetic"}),
              HasSubstr("client.request_rate (--request-rate): a benchmark's client"));
  EXPECT_THAT(refused({"--request-rate", "4", "--time-scale", "2"}),
              HasSubstr("run.time_scale (--time-scale): contradicts client.request_rate"));
  EXPECT_THAT(refused({"--max-concurrency", "4", "--request-rate", "fast"}),
              HasSubstr("--request-rate: expected requests a second or inf"));
}

// --request-rate without --max-concurrency, and the random dataset alone
// (all at once): a benchmark's client with no cap; no max_concurrency
// figure, the others there.
TEST_F(ClosedLoopFlags, ARateWithNoCapIsABenchmarkWithNoCap) {
  const std::vector<std::string> run = {"run", "--server", "batching", "--plots", "none"};
  const test::CliResult paced = run_on_trace(
      run, "paced", {"--request-rate", "20", "--dataset-name", "random", "--num-prompts", "40"});
  ASSERT_EQ(paced.status, 0) << paced.err;
  EXPECT_THAT(paced.out, HasSubstr("no cap (a client a request), paced at 20 requests/s"));
  EXPECT_THAT(paced.out, HasSubstr("Paced at 20 req/s, no cap"));
  const nlohmann::json s = nlohmann::json::parse(test::read_file(dir_ / "paced" / "summary.json"));
  EXPECT_FALSE(s.contains("max_concurrency"));
  EXPECT_EQ(s.at("requests").get<int>(), 40);
  EXPECT_GT(s.at("mean_in_flight").get<double>(), 0);
  // vLLM's pacing puts the last request at exactly n / R = 2 s.
  EXPECT_GE(s.at("benchmark_duration_s").get<double>(), 2.0);

  const test::CliResult burst =
      run_on_trace(run, "burst", {"--dataset-name", "random", "--num-prompts", "30"});
  ASSERT_EQ(burst.status, 0) << burst.err;
  EXPECT_THAT(burst.out, HasSubstr("All at once, no cap"));
  const nlohmann::json b = nlohmann::json::parse(test::read_file(dir_ / "burst" / "summary.json"));
  EXPECT_EQ(b.at("max_concurrent_requests").get<int>(), 30);
}

TEST_F(ClosedLoopFlags, ARunWritesTheBenchmarksFigures) {
  const test::CliResult r =
      run_on_trace({"run", "--server", "batching", "--plots", "none"}, "run",
                   {"--max-concurrency", "2", "--dataset-name", "random", "--random-input-len",
                    "64", "--random-output-len", "8", "--num-prompts", "40", "--num-warmups", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Closed loop: 40 requests of vLLM's random dataset"));
  EXPECT_THAT(r.out, HasSubstr("Closed loop, 2 in flight"));
  const nlohmann::json summary =
      nlohmann::json::parse(test::read_file(dir_ / "run" / "summary.json"));
  EXPECT_EQ(summary.at("requests").get<int>(), 40);
  EXPECT_EQ(summary.at("max_concurrency").get<int>(), 2);
  EXPECT_LE(summary.at("max_concurrent_requests").get<int>(), 2);
  const nlohmann::json settings =
      nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings.at("client").at("max_concurrency").get<int>(), 2);
  EXPECT_EQ(settings.at("client").at("request_rate").get<std::string>(), "inf");
  const std::string page = test::read_file(dir_ / "run" / "report.html");
  EXPECT_THAT(page, HasSubstr("Requests in flight, mean (Little&#39;s law)"));
  EXPECT_THAT(page, HasSubstr("Output tokens a second per GPU"));
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

FrontierPoint frontier_point(std::optional<double> gpu, std::optional<double> user) {
  FrontierPoint p;
  p.per_gpu_tps = gpu;
  p.per_user_tps = user;
  return p;
}

// A point is on the frontier when no other has both rates at least as high
// and one higher; ties stay on it, a point missing a rate never is.
TEST(Frontier, MarksThePointsNoOtherBeatsOnBoth) {
  std::vector<FrontierPoint> points = {frontier_point(100, 50), frontier_point(200, 40),
                                       frontier_point(150, 40), frontier_point(200, 40),
                                       frontier_point(50, 60),  frontier_point(std::nullopt, 90),
                                       frontier_point(40, 45)};
  mark_pareto(points);
  const std::vector<bool> expected = {true, true, false, true, true, false, false};
  for (std::size_t i = 0; i < points.size(); ++i)
    EXPECT_EQ(points[i].pareto, expected[i]) << i;
  points[0].configuration = "replicas=2";
  points[0].max_concurrency = 8;
  points[0].ttft_mean_s = 0.25;
  const std::string csv = frontier_csv(points);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "configuration,max_concurrency,output_throughput_per_gpu_tps,"
            "output_throughput_per_user_tps,ttft_mean_s,ttft_p99_s,tpot_mean_s,"
            "output_throughput_tps,request_throughput_rps,mean_in_flight,pareto");
  EXPECT_THAT(csv, HasSubstr("\nreplicas=2,8,100,50,0.25,,,,,,true\n"));
  EXPECT_THAT(csv, HasSubstr("\n,0,,90,,,,,,,false\n"));
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

class ClosedLoopSweep : public test::TraceFolder {
 protected:
  ClosedLoopSweep() : TraceFolder(kLoopTrace) {}
};

// A sweep over the cap runs the recorded mode alone and writes frontier.csv;
// asked for the synthetic mode beside it, it refuses before any folder.
TEST_F(ClosedLoopSweep, SweepsTheCapIntoAFrontier) {
  const std::vector<std::string> sweep = {"sweep", "--server", "batching", "--plots", "none"};
  const std::vector<std::string> load = {"--vary",
                                         "max-concurrency=1,4",
                                         "--dataset-name",
                                         "random",
                                         "--num-prompts",
                                         "30",
                                         "--random-output-len",
                                         "16"};
  const test::CliResult r = run_on_trace(sweep, "sweep", load);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string csv = test::read_file(dir_ / "sweep" / "frontier.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_THAT(csv, HasSubstr("\n,1,"));
  EXPECT_THAT(csv, HasSubstr("\n,4,"));
  const std::string rows = test::read_file(dir_ / "sweep" / "sweep.csv");
  EXPECT_EQ(rows.find("synthetic"), std::string::npos);

  std::vector<std::string> both = load;
  both.insert(both.end(), {"--modes", "recorded,synthetic"});
  const test::CliResult refused = run_on_trace(sweep, "both", both);
  EXPECT_THAT(test::one_error_line(refused),
              HasSubstr("--max-concurrency: a closed loop runs the recorded mode alone"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "both"));
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

// compare with client.compare_closed_loop: the recorded requests again, sent
// by a closed loop of the recorded hour's mean in flight, beside the others;
// refused outside the compare mode.
TEST_F(ClosedLoopSweep, ACompareRunSetsAClosedLoopBesideTheRecordedHour) {
  const test::CliResult r = run_on_trace({"run", "--server", "batching", "--plots", "none"},
                                         "compare", {"--compare-closed-loop", "on"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("What a closed loop hides"));
  EXPECT_THAT(r.out, HasSubstr("Closed loop, 1 in flight"));
  const nlohmann::json recorded =
      nlohmann::json::parse(test::read_file(dir_ / "compare" / "recorded" / "summary.json"));
  const nlohmann::json closed =
      nlohmann::json::parse(test::read_file(dir_ / "compare" / "closed-loop" / "summary.json"));
  EXPECT_EQ(recorded.at("closed_loop"), closed);
  EXPECT_EQ(closed.at("requests"), recorded.at("requests"));
  EXPECT_EQ(closed.at("max_concurrency").get<int>(), 1);
  EXPECT_EQ(closed.at("max_concurrent_requests").get<int>(), 1);
  EXPECT_THAT(test::read_file(dir_ / "compare" / "report.html"),
              HasSubstr("What a closed loop hides"));

  const test::CliResult refused = run_on_trace({"run", "--server", "batching", "--recorded"},
                                               "recorded", {"--compare-closed-loop", "on"});
  EXPECT_THAT(test::one_error_line(refused),
              HasSubstr("client.compare_closed_loop (--compare-closed-loop): sets a closed loop "
                        "beside a compare run's recorded hour"));
}

// The closed loop's N: the recorded mode's request throughput x mean E2E,
// rounded, at least 1.
TEST(ClosedLoop, ClientsAreTheRecordedMeanInFlight) {
  ModeResult r;
  r.summary.add("request_throughput_rps", 4.0);
  r.summary.add("e2el_mean_s", 2.9);
  EXPECT_EQ(clients_for(r), 12u);
  ModeResult idle;
  idle.summary.add("request_throughput_rps", 0.01);
  idle.summary.add("e2el_mean_s", 1.0);
  EXPECT_EQ(clients_for(idle), 1u);
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

// The figure `key` of the sweep.csv row whose first columns are `prefix`.
std::string sweep_figure(const std::string& csv, const std::string& prefix,
                         const std::string& key) {
  const std::vector<std::string> header = test::fields_of(csv.substr(0, csv.find('\n')));
  const std::size_t column =
      static_cast<std::size_t>(std::find(header.begin(), header.end(), key) - header.begin());
  for (const std::string& line : test::lines_of(csv)) {
    if (line.rfind(prefix, 0) == 0) return test::fields_of(line).at(column);
  }
  return "no row " + prefix;
}

// --vary preset=A,B and --vary settings=a.json,b.json: each value a whole
// configuration under the command line's flags, a curve each in
// frontier.csv; each point the run that configuration gives alone; the
// sweep's settings.json reruns it without the files.
TEST_F(ClosedLoopSweep, VariesPresetsAndSettingsFilesAsCurves) {
  const std::vector<std::string> sweep = {"sweep", "--server", "batching", "--plots", "none"};
  const std::vector<std::string> load = {"--vary",
                                         "max-concurrency=1,4",
                                         "--dataset-name",
                                         "random",
                                         "--num-prompts",
                                         "30",
                                         "--random-output-len",
                                         "16"};
  std::vector<std::string> presets = {"--vary", "preset=h100-llama-3.1-8b,h200-llama-3.1-8b"};
  presets.insert(presets.end(), load.begin(), load.end());
  const test::CliResult r = run_on_trace(sweep, "presets", presets);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string frontier = test::read_file(dir_ / "presets" / "frontier.csv");
  EXPECT_EQ(std::count(frontier.begin(), frontier.end(), '\n'), 5);
  EXPECT_THAT(frontier, HasSubstr("\npreset=h200-llama-3.1-8b,4,"));
  const std::string csv = test::read_file(dir_ / "presets" / "sweep.csv");

  // The H200 point at N = 4 is the run of that preset alone.
  const test::CliResult alone = run_on_trace(
      {"run", "--server", "batching", "--plots", "none", "--preset", "h200-llama-3.1-8b",
       "--max-concurrency", "4"},
      "alone", {"--dataset-name", "random", "--num-prompts", "30", "--random-output-len", "16"});
  ASSERT_EQ(alone.status, 0) << alone.err;
  const nlohmann::json summary =
      nlohmann::json::parse(test::read_file(dir_ / "alone" / "summary.json"));
  for (const char* key : {"ttft_mean_s", "tpot_mean_s", "output_throughput_tps"}) {
    EXPECT_DOUBLE_EQ(std::stod(sweep_figure(csv, "recorded,h200-llama-3.1-8b,4,", key)),
                     summary.at(key).get<double>())
        << key;
  }
  EXPECT_NE(sweep_figure(csv, "recorded,h200-llama-3.1-8b,4,", "ttft_mean_s"),
            sweep_figure(csv, "recorded,h100-llama-3.1-8b,4,", "ttft_mean_s"));

  // Rerun from the sweep's own settings.json: the same rows.
  const test::CliResult again =
      test::run_cli({"sweep", "--settings", (dir_ / "presets" / "settings.json").string(),
                     "--output", (dir_ / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(test::read_file(dir_ / "again" / "sweep.csv"), csv);

  // Settings files: a curve each, named by the file.
  test::write_file(dir_ / "one.json", R"({"batching": {"replicas": 1}})");
  test::write_file(dir_ / "two.json", R"({"batching": {"replicas": 2}})");
  std::vector<std::string> files = {
      "--vary", "settings=" + (dir_ / "one.json").string() + "," + (dir_ / "two.json").string()};
  files.insert(files.end(), load.begin(), load.end());
  const test::CliResult f = run_on_trace(sweep, "files", files);
  ASSERT_EQ(f.status, 0) << f.err;
  const std::string curves = test::read_file(dir_ / "files" / "frontier.csv");
  EXPECT_THAT(curves, HasSubstr("\nsettings=one,4,"));
  EXPECT_THAT(curves, HasSubstr("\nsettings=two,4,"));

  // Refused, naming the flag, before any folder.
  std::vector<std::string> twice = presets;
  twice.insert(twice.end(), {"--preset", "h100-llama-3.1-8b"});
  EXPECT_THAT(test::one_error_line(run_on_trace(sweep, "twice", twice)),
              HasSubstr("--preset: also varied by --vary preset"));
  std::vector<std::string> unknown = {"--vary", "preset=h100-llama-3.1-8b,no-such-preset"};
  EXPECT_THAT(test::one_error_line(run_on_trace(sweep, "unknown", unknown)),
              HasSubstr("--vary preset: no preset 'no-such-preset'"));
  std::vector<std::string> both = presets;
  both.insert(both.end(), {"--vary", "settings=" + (dir_ / "one.json").string()});
  EXPECT_THAT(test::one_error_line(run_on_trace(sweep, "both", both)),
              HasSubstr("both give whole configurations"));
  for (const char* folder : {"twice", "unknown", "both"})
    EXPECT_FALSE(std::filesystem::exists(dir_ / folder)) << folder;
}

}  // namespace
}  // namespace infersim
