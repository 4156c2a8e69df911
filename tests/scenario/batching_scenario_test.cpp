// The batching server (BATCHING.md) end to end on the bundled traces: its
// degenerate case is the edge model's one core to the nanosecond; on the
// Mooncake trace its prefix hit rate is a count made here from the trace's
// block ids; every request is served or rejected, the same way every run; and
// the command line runs it, writes its columns and refuses what the spec
// forbids naming the keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"
#include "test_support.hpp"
#include "trace/azure_csv_reader.hpp"
#include "trace/trace_reader.hpp"

namespace infersim {
namespace {

using ::testing::HasSubstr;

std::string bundled(const std::string& name) {
  const auto path = test::source_dir() / "trace" / name;
  if (!std::filesystem::exists(path)) ADD_FAILURE() << path << " is missing: run trace/fetch";
  return path.string();
}

Trace read_bundled(const std::string& name) {
  TraceSource source;
  source.path = bundled(name);
  return read_trace(source);
}

// BATCHING.md's degenerate case: no network, one replica running one request
// at a time with a budget above every prompt and no caching, a step costing
// mg/M and a prefill token mc/M (M = 50000 MIPS, so every cost is whole
// nanoseconds), is the edge server with one core: a request's prefill step
// ends at start + (c mc + mg)/M, the edge's first token, and its g - 1 decode
// steps of mg/M end at start + (c mc + g mg)/M, the edge's finish. Requests
// with no generated token (one step of mg/M more than the edge's c mc/M) or an
// empty prompt (p = 1) are where the two models part, so they are left out.
TEST(BatchingScenario, DegenerateCaseIsTheEdgeModelOnOneCoreToTheNanosecond) {
  Trace trace = read_azure_csv(test::seed_trace());
  std::erase_if(trace.records, [](const TraceRecord& r) {
    return r.generated_tokens == 0 || r.context_tokens == 0;
  });
  ASSERT_GT(trace.records.size(), 8000u);

  Settings edge;
  edge.hops = {};
  edge.cores = 1;
  edge.mips_per_core = 50000;
  Settings batching = edge;
  batching.server_kind = "batching";
  BatchingKnobs& b = batching.batching;
  b.replicas = 1;
  b.max_num_seqs = 1;
  b.max_num_batched_tokens = 1 << 20;
  b.kv_blocks = 1 << 16;
  b.prefix_caching = false;
  b.step_base_s = 2000.0 / 50000;
  b.step_prefill_token_s = 12.0 / 50000;
  b.step_prefill_pair_s = 0;
  b.step_decode_token_s = 0;
  b.step_decode_context_s = 0;
  const ModeResult one_core = test::run_recorded(edge, trace, true);
  const ModeResult replica = test::run_recorded(batching, trace, true);
  ASSERT_EQ(one_core.log.size(), trace.records.size());
  ASSERT_EQ(replica.log.size(), trace.records.size());
  std::size_t waited = 0;
  for (std::size_t k = 0; k < trace.records.size(); ++k) {
    const RequestOutcome e = one_core.log[k];
    const RequestOutcome r = replica.log[k];
    ASSERT_EQ(r.start, e.start) << "request " << k;
    ASSERT_EQ(r.first_token, e.first_token) << "request " << k;  // no network: the server's
    ASSERT_EQ(r.finish, e.finish) << "request " << k;
    ASSERT_EQ(r.response, e.response) << "request " << k;
    waited += e.start > e.server_arrival;
  }
  EXPECT_GT(waited, 1000u);  // the queue is exercised, not only idle starts
  EXPECT_EQ(*replica.summary.get("compute_s"), *one_core.summary.get("compute_s"));
  EXPECT_EQ(*replica.summary.get("utilization"), *one_core.summary.get("utilization"));
  EXPECT_EQ(*replica.summary.get("steps"), static_cast<double>(trace.total_generated_tokens()));
}

// The prefix hit rate of one replica whose cache never evicts (KV for every
// block of the hour) and whose step admits every waiting request (a budget
// above any burst's prompts): requests are admitted in arrival order, each
// registering its prompt's full blocks as it is admitted, so a request hits
// its leading blocks registered by those before it (BATCHING.md sections 3
// and 4), capped at (p - 1) div 16. Counted here from the trace's ids alone,
// over the trace's first 3000 requests (the first 15 minutes).
TEST(BatchingScenario, MooncakePrefixHitRateIsTheCountFromTheBlockIds) {
  Trace trace = read_bundled("mooncake_conversation_trace.jsonl");
  ASSERT_EQ(trace.block_id_tokens, 512u);
  trace.records.resize(3000);
  trace.hash_ranges.resize(3000);
  constexpr std::uint64_t kB = 16;
  std::set<std::pair<std::uint32_t, std::uint64_t>> registered;
  std::uint64_t hits = 0, tokens = 0;
  for (std::size_t k = 0; k < trace.records.size(); ++k) {
    const std::uint64_t p = std::max<std::uint32_t>(1, trace.records[k].context_tokens);
    const auto ids = trace.hash_ids_of(k);
    const std::uint64_t covered = std::min<std::uint64_t>(p, ids.size() * 512);
    auto identity = [&](std::uint64_t j) {
      return std::pair<std::uint32_t, std::uint64_t>(ids[j * kB / 512], (j * kB % 512) / kB);
    };
    std::uint64_t h = 0;
    while ((h + 1) * kB <= covered && h < (p - 1) / kB && registered.count(identity(h)) > 0)
      ++h;
    hits += h * kB;
    tokens += p;
    for (std::uint64_t j = 0; (j + 1) * kB <= covered; ++j)
      registered.insert(identity(j));
  }
  const double expected = static_cast<double>(hits) / static_cast<double>(tokens);
  ASSERT_GT(expected, 0.1);

  Settings s;
  s.server_kind = "batching";
  s.hops = {};
  s.batching.kv_blocks = 3'000'000;  // 48 M tokens: every prompt and output of them fits
  s.batching.max_num_batched_tokens = std::int64_t{1} << 32;
  s.batching.max_num_seqs = 1 << 20;
  s.batching.max_model_len = 131072;
  const ModeResult r = test::run_recorded(s, trace, false);
  EXPECT_EQ(*r.summary.get("evicted_blocks"), 0);
  EXPECT_EQ(*r.summary.get("preemptions"), 0);
  EXPECT_EQ(*r.summary.get("prefix_hit_rate"), expected);
}

// A small KV cache on two replicas: preemptions happen, long requests are
// rejected (p + o > max_model_len, counted here from the trace), every other
// is served; a second run gives the same outcome for every request.
TEST(BatchingScenario, EveryRequestIsServedOrRejectedTheSameWayEachRun) {
  const Trace trace = read_bundled("mooncake_conversation_trace.jsonl");
  Settings s;
  s.server_kind = "batching";
  s.batching.replicas = 2;
  s.batching.router = RouterKind::kLeastRequests;
  s.batching.kv_blocks = 2000;
  s.batching.max_model_len = 16000;
  std::uint64_t too_long = 0;
  for (const TraceRecord& t : trace.records)
    too_long += std::max<std::uint32_t>(1, t.context_tokens) + t.generated_tokens > 16000;
  ASSERT_GT(too_long, 0u);
  const ModeResult a = test::run_recorded(s, trace, true);
  const ModeResult b = test::run_recorded(s, trace, true);
  EXPECT_EQ(*a.summary.get("requests"), static_cast<double>(trace.records.size()));
  EXPECT_EQ(*a.summary.get("rejected"), static_cast<double>(too_long));
  EXPECT_GT(*a.summary.get("preemptions"), 0);
  std::uint64_t rejected = 0;
  for (std::size_t k = 0; k < a.log.size(); ++k) {
    const RequestOutcome x = a.log[k], y = b.log[k];
    rejected += x.rejected;
    ASSERT_EQ(x.rejected, y.rejected) << k;
    ASSERT_EQ(x.start, y.start) << k;
    ASSERT_EQ(x.finish, y.finish) << k;
    ASSERT_EQ(x.unit, y.unit) << k;
    ASSERT_EQ(x.preemptions, y.preemptions) << k;
    if (!x.rejected) {
      ASSERT_LE(x.server_arrival, x.start) << k;
      ASSERT_LE(x.start, x.first_token_server) << k;
      ASSERT_LE(x.first_token_server, x.finish) << k;
    }
  }
  EXPECT_EQ(rejected, too_long);
  for (std::size_t i = 0; i < a.summary.figures().size(); ++i)
    EXPECT_EQ(a.summary.figures()[i].value, b.summary.figures()[i].value)
        << a.summary.figures()[i].key;
}

TEST(BatchingCommand, ReplaysMooncakeOnEightReplicasAgainstPoisson) {
  const auto dir = test::fresh_dir();
  const test::CliResult r =
      test::run_cli({"run", "--server", "batching", "--trace",
                     bundled("mooncake_conversation_trace.jsonl"), "--replicas", "8", "--router",
                     "prefix", "--plots", "none", "--output", (dir / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("12031"));
  const auto summary = nlohmann::json::parse(test::read_file(dir / "run" / "summary.json"));
  const auto& recorded = summary["recorded"];
  const auto& synthetic = summary["synthetic"];
  EXPECT_EQ(recorded["requests"], 12031);
  EXPECT_GT(recorded["prefix_hit_rate"].get<double>(), 0.1);
  EXPECT_EQ(synthetic["prefix_hit_rate"].get<double>(), 0);  // mean sizes carry no block ids
  for (const char* key : {"rejected", "preemptions", "evicted_blocks", "steps",
                          "avg_batch_requests", "kv_peak_utilization", "itl_p99_s"}) {
    EXPECT_TRUE(recorded.contains(key)) << key;
  }
  EXPECT_TRUE(recorded["avg_exec_s"].is_null());  // no request has an execution time of its own
  const std::string csv = test::read_file(dir / "run" / "recorded" / "requests.csv");
  EXPECT_THAT(csv.substr(0, csv.find('\n')),
              ::testing::EndsWith(",replica,first_token_s,tpot_s,prefix_hit_tokens,"
                                  "preemptions,rejected"));
  const std::string series = test::read_file(dir / "run" / "recorded" / "timeseries.csv");
  EXPECT_THAT(series.substr(0, series.find('\n')), HasSubstr("busy_replicas_mean"));
  EXPECT_THAT(series.substr(0, series.find('\n')), HasSubstr("kv_blocks_used_mean"));
  const auto settings = nlohmann::json::parse(test::read_file(dir / "run" / "settings.json"));
  EXPECT_EQ(settings["server"]["kind"], "batching");
  EXPECT_EQ(settings["batching"]["replicas"], 8);
  EXPECT_EQ(settings["batching"]["router"], "prefix");
}

TEST(BatchingCommand, RefusesWhatTheSpecForbidsNamingTheKeys) {
  const std::string mooncake = bundled("mooncake_conversation_trace.jsonl");
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  const std::vector<Case> cases = {
      {{"--max-model-len", "600000"}, "batching.max_model_len"},
      {{"--max-num-seqs", "9000"}, "batching.max_num_seqs"},
      {{"--router", "random"}, "--router"},
      {{"--prefix-caching", "maybe"}, "--prefix-caching"},
      {{"--kv-blocks", "0"}, "--kv-blocks"},
      {{"--trace", mooncake, "--block-tokens", "24"}, "batching.block_tokens"},
  };
  for (const Case& c : cases) {
    const auto dir = test::fresh_dir();
    std::vector<std::string> args = {"run",        "--server", "batching",
                                     "--recorded", "--output", (dir / "run").string()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.status, 2) << c.said;
    EXPECT_THAT(r.err, HasSubstr(c.said));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "run")) << c.said;
  }
}

}  // namespace
}  // namespace infersim
