// The batching server against cases worked out by hand from BATCHING.md, each
// derivation in a comment. Unless a case says otherwise: one replica, S = 8,
// Tb = 64, B = 4, K = 16 (so L = 64), no prefix caching, no full-prompt
// reservation, c0 = 1 ms, cp = 1 us a prefill token, cd = 10 us a decode,
// cq = ckv = 0. So a step of P prefill tokens and D decodes lasts
// 1,000,000 + 1,000 P + 10,000 D ns.
#include "model/batching_server.hpp"

#include <gtest/gtest.h>

#include "unit/inspectors.hpp"

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <pcg_random.hpp>

#include "model/edge_server.hpp"
#include "model/simulation.hpp"
#include "scenario/scenario.hpp"
#include "test_support.hpp"
#include "trace/azure_csv_reader.hpp"
#include "unit/server_harness.hpp"

namespace infersim {
namespace {

using test::fed;
using test::FedRequest;
using test::ServerHarness;

SimTime t(std::int64_t ns) {
  return SimTime::ns(ns);
}
Duration d(std::int64_t ns) {
  return Duration::ns(ns);
}

// What the tests vary in small(): replicas, the router, the limits on a
// step and the cache, and the ways of scheduling.
struct Setup {
  std::int64_t replicas = 1;
  RouterKind router = RouterKind::kRoundRobin;
  std::int64_t max_num_seqs = 8;             // S
  std::int64_t max_num_batched_tokens = 64;  // Tb
  std::int64_t kv_blocks = 16;               // K
  bool prefix_caching = false;
  bool reserve_full_prompt = false;
  bool async_scheduling = false;
  bool lockstep = false;
};

// A server small enough to follow by hand, as `setup` says.
BatchingKnobs small(const Setup& setup = {}) {
  BatchingKnobs k;
  k.replicas = setup.replicas;
  k.router = setup.router;
  k.max_num_seqs = setup.max_num_seqs;
  k.max_num_batched_tokens = setup.max_num_batched_tokens;
  k.block_tokens = 4;
  k.kv_blocks = setup.kv_blocks;
  k.prefix_caching = setup.prefix_caching;
  k.reserve_full_prompt = setup.reserve_full_prompt;
  k.step_base_s = 1e-3;
  k.step_prefill_token_s = 1e-6;
  k.step_prefill_pair_s = 0;
  k.step_decode_token_s = 1e-5;
  k.step_decode_context_s = 0;
  k.async_scheduling = setup.async_scheduling;
  k.lockstep = setup.lockstep;
  return k;
}

// A server and the harness around it, run over `requests`.
struct Served {
  explicit Served(const BatchingKnobs& knobs, const std::vector<FedRequest>& requests)
      : server(knobs), harness(server) {
    harness.run(requests);
  }
  const test::RequestReport& operator[](std::size_t id) const { return harness.reports[id]; }
  const std::vector<StepRecord>& steps() const { return harness.steps; }
  BatchingServer server;
  ServerHarness harness;
};

std::vector<SimTime> step_ends(const Served& run) {
  std::vector<SimTime> ends;
  for (const StepRecord& s : run.steps())
    ends.push_back(s.end);
  return ends;
}

std::optional<double> figure(const ServerUsage& usage, const std::string& key) {
  for (const ServerFigure& f : usage.figures) {
    if (f.key == key) return f.value;
  }
  ADD_FAILURE() << "no figure " << key;
  return std::nullopt;
}

// The replica each request ran on, by id.
std::vector<std::uint32_t> units(const Served& run) {
  std::vector<std::uint32_t> out;
  for (const test::RequestReport& r : run.harness.reports)
    out.push_back(r.unit);
  return out;
}

// Checks the counts of `step` that `expected` names (as StepRecord names
// its fields).
void expect_counts(const StepRecord& step, const std::map<std::string, std::uint64_t>& expected) {
  const std::map<std::string, std::uint64_t> counts{{"batch_requests", step.batch_requests},
                                                    {"scheduled_tokens", step.scheduled_tokens},
                                                    {"prefill_tokens", step.prefill_tokens},
                                                    {"prefill_pairs", step.prefill_pairs},
                                                    {"decode_requests", step.decode_requests},
                                                    {"decode_context", step.decode_context},
                                                    {"running", step.running},
                                                    {"waiting", step.waiting},
                                                    {"kv_blocks_used", step.kv_blocks_used},
                                                    {"kv_blocks", step.kv_blocks},
                                                    {"preemptions", step.preemptions},
                                                    {"admitted_tokens", step.admitted_tokens},
                                                    {"hit_tokens", step.hit_tokens}};
  for (const auto& [name, value] : expected) {
    ASSERT_TRUE(counts.count(name)) << "no count " << name;
    EXPECT_EQ(counts.at(name), value) << name;
  }
}

using Instants = std::vector<std::optional<SimTime>>;

// One instant of every request, by id: its start, first token or finish.
Instants each(const Served& run, std::optional<SimTime> test::RequestReport::*instant) {
  Instants out;
  for (const test::RequestReport& r : run.harness.reports)
    out.push_back(r.*instant);
  return out;
}

// Tb = 8; p = 20, o = 2. Steps: 8 prefill tokens (1,008,000 ns, ends
// 1,008,000), 8 more (ends 2,016,000), the last 4 (1,004,000, ends 3,020,000:
// computed = 20 = num_tokens, the first token, num_tokens 21), one decode
// (cb = 20 = num_tokens - 1; 1,010,000, ends 4,030,000: the second token, the
// finish). Blocks held after each scheduling: ceil(8/4) = 2, 4, 5, ceil(21/4) = 6.
TEST(BatchingServer, ChunkedPrefillSpansSteps) {
  const Served run(small({.max_num_batched_tokens = 8}), {fed(0, 20, 2)});
  EXPECT_EQ(run[0].start, t(0));
  EXPECT_EQ(run[0].first_token, t(3'020'000));
  EXPECT_EQ(run[0].finish, t(4'030'000));
  EXPECT_EQ(run.harness.gaps, std::vector<Duration>{d(1'010'000)});
  ASSERT_EQ(run.steps().size(), 4u);
  EXPECT_EQ(step_ends(run),
            (std::vector<SimTime>{t(1'008'000), t(2'016'000), t(3'020'000), t(4'030'000)}));
  const std::uint64_t prefill[] = {8, 8, 4, 0};
  const std::uint32_t decodes[] = {0, 0, 0, 1};
  const std::uint32_t used[] = {2, 4, 5, 6};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(run.steps()[i].prefill_tokens, prefill[i]) << i;
    EXPECT_EQ(run.steps()[i].decode_requests, decodes[i]) << i;
    EXPECT_EQ(run.steps()[i].kv_blocks_used, used[i]) << i;
    EXPECT_EQ(run.steps()[i].batch_requests, 1u);
  }
  EXPECT_EQ(run.steps()[0].admitted_tokens, 20u);
  EXPECT_EQ(run.steps()[1].admitted_tokens, 0u);
}

// Tb = 10; three requests of p = 6, o = 1 at 0. Step 1: A (6), then B with
// what is left of the budget (4); the budget is spent, C waits. P = 10: ends
// 1,010,000, A finishes. Step 2: B's last 2 (prefill, cb = 4), then C (6):
// P = 8, ends 2,018,000; both finish.
TEST(BatchingServer, TheTokenBudgetStopsAdmission) {
  const Served run(small({.max_num_batched_tokens = 10}),
                   {fed(0, 6, 1), fed(0, 6, 1), fed(0, 6, 1)});
  EXPECT_EQ(each(run, &test::RequestReport::start), (Instants{t(0), t(0), t(1'010'000)}));
  EXPECT_EQ(each(run, &test::RequestReport::finish),
            (Instants{t(1'010'000), t(2'018'000), t(2'018'000)}));
  ASSERT_EQ(run.steps().size(), 2u);
  EXPECT_EQ(run.steps()[0].scheduled_tokens, 10u);
  EXPECT_EQ(run.steps()[0].waiting, 1u);
  EXPECT_EQ(run.steps()[1].batch_requests, 2u);
}

// S = 2; three requests of p = 4, o = 2 at 0. Step 1: A and B (|running| = 2
// = S stops C); P = 8, ends 1,008,000 (first tokens). Step 2: two decodes,
// 1,020,000, ends 2,028,000: A and B finish; C could not join (S). Step 3: C,
// P = 4, ends 3,032,000; step 4: its decode, ends 4,042,000.
TEST(BatchingServer, MaxNumSeqsStopsAdmission) {
  const Served run(small({.max_num_seqs = 2}), {fed(0, 4, 2), fed(0, 4, 2), fed(0, 4, 2)});
  EXPECT_EQ(each(run, &test::RequestReport::start), (Instants{t(0), t(0), t(2'028'000)}));
  EXPECT_EQ(each(run, &test::RequestReport::first_token),
            (Instants{t(1'008'000), t(1'008'000), t(3'032'000)}));
  EXPECT_EQ(each(run, &test::RequestReport::finish),
            (Instants{t(2'028'000), t(2'028'000), t(4'042'000)}));
}

// K = 4 (16 tokens); A and B: p = 4, o = 6 at 0. Step 1: one block each,
// P = 8, ends t1 = 1,008,000 (num_tokens 5 each). Step 2: each needs a second
// block (ceil(5/4) = 2): free 2 -> 0; two decodes, 1,020,000 a step: steps 2-5
// end at 2,028,000, 3,048,000, 4,068,000, 5,088,000 (num_tokens 9 each). Step
// 6: A needs ceil(9/4) - 2 = 1 block, none is free: the last running request,
// B, is preempted (its 2 blocks freed, computed 0, to the front of waiting);
// A takes a block; no admission in a step that preempted. One decode: ends
// 6,098,000, A finishes (out 6). Step 7: B recomputes its 9 tokens (4 of
// prompt, 5 generated) as a prefill (cb = 0): P = 9, 1,009,000, ends
// 7,107,000 with its sixth token: it finishes.
TEST(BatchingServer, KvExhaustionPreemptsTheLastRunningRequest) {
  const Served run(small({.kv_blocks = 4}), {fed(0, 4, 6), fed(0, 4, 6)});
  EXPECT_EQ(each(run, &test::RequestReport::finish), (Instants{t(6'098'000), t(7'107'000)}));
  EXPECT_EQ(run[0].preemptions, 0u);
  EXPECT_EQ(run[1].preemptions, 1u);
  EXPECT_EQ(run[1].start, t(0));
  EXPECT_EQ(run[1].first_token, t(1'008'000));
  ASSERT_EQ(run.steps().size(), 7u);
  expect_counts(run.steps()[5], {{"preemptions", 1},
                                 {"batch_requests", 1},
                                 {"running", 1},
                                 {"waiting", 1},
                                 {"kv_blocks_used", 3}});
  expect_counts(run.steps()[6], {{"prefill_tokens", 9}, {"admitted_tokens", 9}});
  // Gaps: steps 2-5 one for A then one for B (1,020,000 each), A's last
  // (1,010,000), B's across its preemption (7,107,000 - 5,088,000).
  std::vector<Duration> gaps(8, d(1'020'000));
  gaps.push_back(d(1'010'000));
  gaps.push_back(d(2'019'000));
  EXPECT_EQ(run.harness.gaps, gaps);
  EXPECT_EQ(figure(run.server.usage(t(7'107'000)), "preemptions"), 1.0);
}

// K = 4, Tb = 10; A: p = 6, o = 3; B: p = 12, o = 1, both at 0; admitted
// with and without reserving blocks for the whole prompt.
TEST(BatchingServer, AdmissionWithAndWithoutTheWholePromptCheck) {
  struct Admitted {
    bool reserve_full_prompt;
    std::int64_t a_first_token, a_finish, b_start, b_finish;
    std::uint32_t b_preemptions;
  };
  const Admitted cases[] = {
      // Without the whole-prompt check: step 1 admits A (2 blocks) and B's
      // first 4 tokens (need 1 <= free 2); P = 10, ends 1,010,000. Step 2: A
      // decodes (no new block); B needs ceil(12/4) - 1 = 2 > free 1: B, the
      // last running, is preempted (it is r: step 1 stops). One decode, ends
      // 2,020,000. Step 3: B's 9 first tokens need 3 > free 2: it waits; A's
      // decode, ends 3,030,000, A finishes. Step 4: B, 10 tokens (need 3 <=
      // 4), ends 4,040,000; step 5 its last 2 (cb = 10), 1,002,000, ends
      // 5,042,000.
      {false, 1'010'000, 3'030'000, 0, 5'042'000, 1},
      // With it: in step 1 B needs max(1, ceil(12/4)) = 3 > free 2 and waits.
      // A alone: P = 6, ends 1,006,000; decodes end 2,016,000 and 3,026,000
      // (A finishes). B then: 10 tokens (ends 4,036,000), 2 more (ends
      // 5,038,000). No preemption.
      {true, 1'006'000, 3'026'000, 3'026'000, 5'038'000, 0},
  };
  for (const Admitted& c : cases) {
    SCOPED_TRACE(c.reserve_full_prompt ? "whole prompt reserved" : "no whole-prompt check");
    const Served run(small({.max_num_batched_tokens = 10,
                            .kv_blocks = 4,
                            .reserve_full_prompt = c.reserve_full_prompt}),
                     {fed(0, 6, 3), fed(0, 12, 1)});
    EXPECT_EQ(run[0].first_token, t(c.a_first_token));
    EXPECT_EQ(run[1].start, t(c.b_start));
    EXPECT_EQ(each(run, &test::RequestReport::finish), (Instants{t(c.a_finish), t(c.b_finish)}));
    EXPECT_EQ(run[1].preemptions, c.b_preemptions);
  }
}

// Prefix caching, Bh = B = 4 (one id a block), cq = 1e-7. A: p = 8, o = 1,
// ids [1, 2] at 0: blocks 0 and 1 registered as (1,0), (2,0) when scheduled;
// P = 8, Q = 8*9/2 = 36: 1e-3 + 8e-6 + 3.6e-6 s = 1,011,600 ns; on finishing
// it releases block 1 then block 0, both cached, to the back: queue
// 2..15, 1, 0. B: the same prompt at 2,000,000: both identities are cached,
// but the hit is capped at (8 - 1) div 4 = 1 block (4 tokens). It touches
// block 0 (free, so touched = 1), takes block 2 for its second block, whose
// identity (2,0) block 1 holds already: block 2 stays anonymous. Its step:
// n = 4, cb = 4: P = 4, Q = 4*4 + 4*5/2 = 26: 1,006,600 ns, finish at
// 3,006,600. It releases block 2 (anonymous: to the front), then block 0 (to
// the back): queue 2, 3, ..., 15, 1, 0.
TEST(BatchingServer, AHitIsCappedBelowTheLastToken) {
  BatchingKnobs k = small({.prefix_caching = true});
  k.step_prefill_pair_s = 1e-7;
  const std::vector<std::uint32_t> ids{1, 2};
  const Served run(k, {fed(0, 8, 1, ids, 4), fed(2'000'000, 8, 1, ids, 4)});
  EXPECT_EQ(run[0].finish, t(1'011'600));
  EXPECT_EQ(run[0].prefix_hit_tokens, 0u);
  EXPECT_EQ(run[1].finish, t(3'006'600));
  EXPECT_EQ(run[1].prefix_hit_tokens, 4u);
  ASSERT_EQ(run.steps().size(), 2u);
  EXPECT_EQ(run.steps()[1].hit_tokens, 4u);
  EXPECT_EQ(run.steps()[1].admitted_tokens, 8u);
  EXPECT_EQ(run.steps()[1].prefill_tokens, 4u);
  const KvBlockPool& pool = test::ServerInspector::replicas(run.server)[0]->pool();
  EXPECT_EQ(test::PoolInspector::free_queue(pool),
            (std::vector<std::uint32_t>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, 0}));
  EXPECT_EQ(pool.find(std::uint64_t{2} << 32), 1u);
  EXPECT_FALSE(pool.cached(2));
  // 4 hit tokens over 8 + 8 admitted.
  EXPECT_EQ(figure(run.server.usage(t(3'006'600)), "prefix_hit_rate"), 0.25);
}

// An anonymous block gets its identity once the block that held it is evicted
// (K = 4, prefix caching, Bh = B = 4).
// A: p = 8, o = 1, ids [1, 2] at 0: blocks 0, 1 cached; ends 1,008,000;
// queue 2, 3, 1, 0.
// B: the same prompt, o = 4, at 2,000,000: hit capped at 1 block; touches 0,
// takes 2 (anonymous: (2,0) is block 1's); P = 4, ends 3,004,000. Its decode
// at 3,004,000 takes block 3 (ceil(9/4) = 3), ends 4,014,000.
// E: p = 4, o = 1, no ids, at 3,500,000: admitted at 4,014,000 beside B's
// decode, it takes block 1, the last free one: (2,0) is evicted. Step: P = 4,
// D = 1: 1,014,000, ends 5,028,000; E finishes (block 1 to the front).
// B's next decode registers again: block 2 now gets (2,0). Ends 6,038,000, B
// finishes: queue 3, 1, 2, 0.
// F: p = 12, o = 1, ids [1, 2, 3] at 7,000,000: hit (1,0) = block 0, (2,0) =
// block 2, capped at 11 div 4 = 2: 8 tokens. n = 4, P = 4: finishes at
// 8,004,000 (without the late registration: hit 4, P = 8, 8,008,000).
TEST(BatchingServer, AnAnonymousBlockIsRegisteredOnceItsIdentityIsFree) {
  BatchingKnobs k = small({.kv_blocks = 4, .prefix_caching = true});
  const std::vector<std::uint32_t> ab{1, 2};
  const std::vector<std::uint32_t> f{1, 2, 3};
  const Served run(k, {fed(0, 8, 1, ab, 4), fed(2'000'000, 8, 4, ab, 4), fed(3'500'000, 4, 1),
                       fed(7'000'000, 12, 1, f, 4)});
  EXPECT_EQ(run[0].finish, t(1'008'000));
  EXPECT_EQ(run[1].start, t(2'000'000));
  EXPECT_EQ(run[1].first_token, t(3'004'000));
  EXPECT_EQ(run[1].finish, t(6'038'000));
  EXPECT_EQ(run[1].prefix_hit_tokens, 4u);
  EXPECT_EQ(run[2].start, t(4'014'000));
  EXPECT_EQ(run[2].finish, t(5'028'000));
  EXPECT_EQ(run[3].prefix_hit_tokens, 8u);
  EXPECT_EQ(run[3].finish, t(8'004'000));
  EXPECT_EQ(figure(run.server.usage(t(8'004'000)), "evicted_blocks"), 1.0);
}

// A request preempted after its first token, its whole prompt cached, comes
// back as a decode entry. K = 5, prefix caching, Bh = B = 4, ckv = 1e-7.
// X: p = 8, o = 2, no ids; A: p = 8, o = 3, ids [1, 2]; both at 0.
// Step 1: X blocks 0, 1; A blocks 2, 3 (cached as (1,0), (2,0)); P = 16:
// ends t1 = 1,016,000 (num_tokens 9 each).
// Step 2: X takes block 4 (free 0); A needs a block: A (the last) is
// preempted, its blocks 3 then 2 to the back. X's decode: cb = 8, A term 9:
// 1e-3 + 1e-5 + 9e-7 s = 1,010,900, ends 2,026,900; X finishes.
// Step 3: A (num_tokens 9): hit 2 blocks (capped at 8 div 4 = 2), n = 1,
// cb = 8 = num_tokens - 1 with out = 1: a decode entry, 1,010,900, ends
// 3,037,800. Step 4: its decode, cb = 9: 1e-3 + 1e-5 + 1e-6, ends 4,048,800.
TEST(BatchingServer, AResumedRequestWithAllButItsLastTokenCachedDecodes) {
  BatchingKnobs k = small({.kv_blocks = 5, .prefix_caching = true});
  k.step_decode_context_s = 1e-7;
  const std::vector<std::uint32_t> ids{1, 2};
  const Served run(k, {fed(0, 8, 2), fed(0, 8, 3, ids, 4)});
  EXPECT_EQ(run[0].finish, t(2'026'900));
  EXPECT_EQ(run[1].first_token, t(1'016'000));
  EXPECT_EQ(run[1].finish, t(4'048'800));
  EXPECT_EQ(run[1].preemptions, 1u);
  EXPECT_EQ(run[1].prefix_hit_tokens, 8u);
  ASSERT_EQ(run.steps().size(), 4u);
  EXPECT_EQ(run.steps()[1].preemptions, 1u);
  const StepRecord& resumed = run.steps()[2];
  expect_counts(resumed, {{"prefill_tokens", 0},
                          {"decode_requests", 1},
                          {"scheduled_tokens", 1},
                          {"hit_tokens", 8},
                          {"admitted_tokens", 9}});
  EXPECT_EQ(resumed.end - resumed.start, d(1'010'900));
  EXPECT_EQ(run.harness.gaps, (std::vector<Duration>{d(1'010'900), d(2'021'800), d(1'011'000)}));
}

// Every term of the step cost: cq = 1e-8, ckv = 1e-7, Tb = 10. A: p = 14,
// o = 2 at 0; B: p = 3, o = 2 at 500,000.
// Step 1: A's first 10: P = 10, Q = 10*11/2 = 55: 1e-3 + 1e-5 + 5.5e-7 s =
// 1,010,550 ns. Step 2: A's last 4 (cb = 10: Q = 40 + 10 = 50) and B's 3 (Q =
// 6): P = 7, Q = 56: 1,007,560, ends 2,018,110. Step 3: two decodes, A term
// (14 + 1) + (3 + 1) = 19: 1e-3 + 2e-5 + 1.9e-6 s = 1,021,900, ends 3,040,010.
TEST(BatchingServer, TheStepCostSumsItsTerms) {
  BatchingKnobs k = small({.max_num_batched_tokens = 10});
  k.step_prefill_pair_s = 1e-8;
  k.step_decode_context_s = 1e-7;
  const Served run(k, {fed(0, 14, 2), fed(500'000, 3, 2)});
  EXPECT_EQ(step_ends(run), (std::vector<SimTime>{t(1'010'550), t(2'018'110), t(3'040'010)}));
  EXPECT_EQ(run[0].finish, t(3'040'010));
  EXPECT_EQ(run[1].start, t(1'010'550));
  EXPECT_EQ(run.steps()[1].prefill_tokens, 7u);
  EXPECT_EQ(run.steps()[2].decode_requests, 2u);
  EXPECT_EQ(run.steps()[2].prefill_tokens, 0u);
}

// L = 20: a request of p + o = 21 is rejected when it reaches the server
// (at 100), takes no round-robin turn (the next goes to replica 1) and never
// starts.
TEST(BatchingServer, ALongRequestIsRejectedAndTakesNoTurn) {
  BatchingKnobs k = small({.replicas = 2});
  k.max_model_len = 20;
  const Served run(k, {fed(0, 4, 1), fed(100, 15, 6), fed(200, 14, 6)});
  EXPECT_EQ(run[0].unit, 0u);
  EXPECT_EQ(run[1].rejected, t(100));
  EXPECT_FALSE(run[1].start.has_value());
  EXPECT_EQ(run[2].unit, 1u);
  EXPECT_TRUE(run[2].finish.has_value());
  EXPECT_EQ(figure(run.server.usage(t(10'000'000)), "rejected"), 1.0);
}

// Requests routed among replicas of small(): the replica each ran on, and
// the prompt tokens some (by id) found cached there.
struct Routed {
  const char* name;
  Setup setup;
  std::vector<FedRequest> requests;
  std::vector<std::uint32_t> units;
  std::vector<std::pair<std::size_t, std::uint64_t>> hits = {};
};

TEST(BatchingServer, RoutersChooseTheReplicaTheirRuleNames) {
  using R = RouterKind;
  const std::vector<std::uint32_t> a{1, 2}, b{5, 6}, c{1, 2, 3}, c5{5, 6, 7}, dd{5, 9, 10};
  const Routed cases[] = {
      {"round-robin takes turns",
       {.replicas = 3},
       {fed(0, 4, 1), fed(0, 4, 1), fed(0, 4, 1), fed(0, 4, 1)},
       {0, 1, 2, 0}},
      // Three requests at one instant: the first sees (0, 0) and takes
      // replica 0, the second (1, 0), the third (1, 1): replica 0.
      {"least-requests sees the earlier arrivals of the instant",
       {.replicas = 2, .router = R::kLeastRequests},
       {fed(0, 4, 1), fed(0, 4, 1), fed(0, 4, 1)},
       {0, 1, 0}},
      // kv-aware, prefix caching, Bh = B = 4. A: p = 8, ids [1, 2] at 0: cost
      // 2 on both, replica 0; it finishes at 1,008,000, its blocks cached
      // there (U = 0 again). At 2,000,000: C (p = 12, ids [1, 2, 3]): replica
      // 0 hits 2 blocks (capped at 11 div 4): ceil((0 + 12 - 8)/4) + 0 = 1
      // against 3: replica 0. D (p = 4): replica 0 now has W = 12: ceil(16/4)
      // = 4 against 1: replica 1. E (p = 4): 4 against ceil((4 + 4)/4) = 2:
      // replica 1. At 2,000,500, after C (3 blocks held) and D, E (1 each)
      // were admitted: H (p = 4): ceil(4/4) + 3 = 4 against 1 + 2 = 3:
      // replica 1.
      {"kv-aware weighs waiting tokens, hits and used blocks",
       {.replicas = 2, .router = R::kKvAware, .prefix_caching = true},
       {fed(0, 8, 1, a, 4), fed(2'000'000, 12, 1, c, 4), fed(2'000'000, 4, 1), fed(2'000'000, 4, 1),
        fed(2'000'500, 4, 1)},
       {0, 0, 1, 1, 1},
       {{1, 8}}},
      // prefix, Bh = B = 4. At 0: A (ids [1, 2]) -> replica 0 (no hit
      // anywhere, least requests, tie); B (ids [5, 6]) -> replica 1 (1
      // against 0). Both finish at 1,008,000, cached where they ran. At
      // 2,000,000: C (p = 12, ids [5, 6, 7]): hit 8 on replica 1, 8/12 > 0.5:
      // replica 1. D (p = 12, ids [5, 9, 10]): best hit 4 on replica 1, 4/12
      // <= 0.5: least requests, replica 0 (0 against 1). E (p = 8, ids [5,
      // 6]): hit capped at 7 div 4 = 1 block, 4/8 is not above 0.5: least
      // requests, 1 against 1: replica 0.
      {"prefix follows the largest hit above half the prompt",
       {.replicas = 2, .router = R::kPrefix, .prefix_caching = true},
       {fed(0, 8, 1, a, 4), fed(0, 8, 1, b, 4), fed(2'000'000, 12, 1, c5, 4),
        fed(2'000'000, 12, 1, dd, 4), fed(2'000'000, 8, 1, b, 4)},
       {0, 1, 1, 0, 0},
       {{2, 8}}},
      // Async, least-requests. A at 0 -> replica 0 (steps from 0). B at
      // 500,000: (1, 0) -> replica 1, idle: joins waiting, steps. C at
      // 600,000: (1, 1) -> replica 0, stepping: pending. D at 700,000: (2, 1)
      // counting C -> replica 1 (with C uncounted it would tie and go to
      // replica 0).
      {"routers count pending requests as waiting",
       {.replicas = 2, .router = R::kLeastRequests, .async_scheduling = true},
       {fed(0, 4, 3), fed(500'000, 4, 3), fed(600'000, 4, 1), fed(700'000, 4, 1)},
       {0, 1, 0, 1}},
  };
  for (const Routed& routed : cases) {
    SCOPED_TRACE(routed.name);
    const Served run(small(routed.setup), routed.requests);
    EXPECT_EQ(units(run), routed.units);
    for (const auto& [id, tokens] : routed.hits)
      EXPECT_EQ(run[id].prefix_hit_tokens, tokens) << "request " << id;
  }
}

// vllm-dp, R = 2, counts refreshed every second. At 0 (a refresh: (0, 0)
// and (0, 0)): A scores 0 and 0, replica 0, which now counts 1 waiting; B
// scores 4 and 0, replica 1; C 4 and 4, replica 0 (the tie). A and C finish
// at 1,008,000, B at 1,004,000. D at 2,000,000 still sees the picks (2 and 1
// waiting): 8 against 4, replica 1, where exact counts (0 and 0) send it to
// replica 0. Refreshed every millisecond, 2,000,000 is a refresh instant:
// replica 0.
TEST(BatchingServer, VllmDpRoutesByRefreshedCountsAndItsOwnPicks) {
  BatchingKnobs k = small({.replicas = 2, .router = RouterKind::kDataParallel});
  k.router_refresh_s = 1;
  const std::vector<FedRequest> requests{fed(0, 4, 1), fed(0, 4, 1), fed(0, 4, 1),
                                         fed(2'000'000, 4, 1)};
  const Served stale(k, requests);
  EXPECT_EQ(units(stale), (std::vector<std::uint32_t>{0, 1, 0, 1}));
  EXPECT_EQ(stale[0].finish, t(1'008'000));
  EXPECT_EQ(stale[1].finish, t(1'004'000));
  k.router_refresh_s = 0.001;
  EXPECT_EQ(units(Served(k, requests)), (std::vector<std::uint32_t>{0, 1, 0, 0}));
}

// A running request's count: with it running on replica 0 at the refresh,
// the next arrival goes to replica 1. A (p = 4, o = 3) steps from 0; at
// 1,500,000 (a refresh, every 0.5 ms) it runs: (0, 1) against (0, 0). B:
// replica 1. C, at the same instant: 1 against 4, replica 0.
//
// And once, not four times: at 0, A (o = 10) takes replica 0, A2 (o = 1)
// replica 1 (4 against 0), A3 (o = 10) replica 0 (4 against 4, the lower).
// At 3,000,000 A2 is done and A and A3 run: (0, 2) against (0, 0). B takes
// replica 1 (2 against 0), which then scores 4; C goes to replica 0, 2
// against 4, where running requests weighed as waiting ones (8 against 4)
// would send it to replica 1.
TEST(BatchingServer, VllmDpCountsRunningRequestsOnce) {
  BatchingKnobs k = small({.replicas = 2, .router = RouterKind::kDataParallel});
  k.router_refresh_s = 0.0005;
  const Served run(k, {fed(0, 4, 3), fed(1'500'000, 4, 1), fed(1'500'000, 4, 1)});
  EXPECT_EQ(units(run), (std::vector<std::uint32_t>{0, 1, 0}));
  const Served two(
      k, {fed(0, 4, 10), fed(0, 4, 1), fed(0, 4, 10), fed(3'000'000, 4, 1), fed(3'000'000, 4, 1)});
  EXPECT_LT(two[1].finish, t(3'000'000));
  EXPECT_GT(two[0].finish, t(3'000'000));
  EXPECT_GT(two[2].finish, t(3'000'000));
  EXPECT_EQ(units(two), (std::vector<std::uint32_t>{0, 1, 0, 1, 0}));
}

// Arrivals taken at the engine's turns (section 10b), async, one replica. A
// (p = 4, o = 3) steps over [0, 1,004,000). B at 300,000 is nearer the step's
// start: taken there, pending 1, it joins at 1,004,000 and step 2 holds its
// prefill with A's decode (1,014,000: ends 2,018,000, B's token). C at
// 800,000 is nearer the end: taken at 1,004,000, pending 2, it joins at
// 2,018,000 and step 3 holds it with A's last decode (ends 3,032,000). B's
// turn is 0, C's 1,004,000; A arrived at an idle replica: its own instant.
// Without turns both wait for step 3, after A's lone decode (2,014,000).
TEST(BatchingServer, ReplayedArrivalsAreTakenAtTheNearerEndOfTheStep) {
  BatchingKnobs k = small({.async_scheduling = true});
  k.engine_turn_arrivals = true;
  const std::vector<FedRequest> requests{fed(0, 4, 3), fed(300'000, 4, 1), fed(800'000, 4, 1)};
  const Served run(k, requests);
  EXPECT_FALSE(run[0].queued.has_value());
  EXPECT_EQ(run[1].queued, t(0));
  EXPECT_EQ(run[1].start, t(1'004'000));
  EXPECT_EQ(run[1].finish, t(2'018'000));
  EXPECT_EQ(run[2].queued, t(1'004'000));
  EXPECT_EQ(run[2].start, t(2'018'000));
  EXPECT_EQ(run[2].finish, t(3'032'000));
  k.engine_turn_arrivals = false;
  const Served plain(k, requests);
  EXPECT_EQ(plain[1].start, t(2'014'000));
  EXPECT_FALSE(plain[1].queued.has_value());
  // Without async scheduling each is taken at the step's end and starts there.
  k.async_scheduling = false;
  k.engine_turn_arrivals = true;
  const Served sync(k, requests);
  EXPECT_EQ(sync[1].queued, t(1'004'000));
  EXPECT_EQ(sync[2].queued, t(1'004'000));
  EXPECT_EQ(sync[1].start, t(1'004'000));
}

// prefix, R = 2: X (ids [1, 2]) caches its prompt on replica 0. At 2,000,000,
// 36 requests with ids [1, 2, 3] (hit 8 of 12 on replica 0). The first 33 go
// to replica 0; then hi - lo = 33 > 32 and 33 > 1.1 * 0: the 34th goes to the
// least loaded, replica 1; the 35th sees 33 and 1 (difference 32, not above):
// the hit, replica 0; the 36th sees 34 and 1: replica 1.
TEST(BatchingServer, PrefixBalancesWhenTheLoadsDrift) {
  BatchingKnobs k = small({.replicas = 2, .router = RouterKind::kPrefix, .prefix_caching = true});
  const std::vector<std::uint32_t> x{1, 2}, y{1, 2, 3};
  std::vector<FedRequest> requests{fed(0, 8, 1, x, 4)};
  for (int i = 0; i < 36; ++i)
    requests.push_back(fed(2'000'000, 12, 1, y, 4));
  const Served run(k, requests);
  for (int i = 1; i <= 33; ++i)
    EXPECT_EQ(run[i].unit, 0u) << i;
  EXPECT_EQ(run[34].unit, 1u);
  EXPECT_EQ(run[35].unit, 0u);
  EXPECT_EQ(run[36].unit, 1u);
}

// least-requests, R = 2: A's step on replica 0 ends at 1,004,000, when B
// arrives. Step ends come first: A has finished, B sees (0, 0) and takes
// replica 0, scheduled at once.
TEST(BatchingServer, StepsEndBeforeArrivalsOfTheSameInstant) {
  const Served run(small({.replicas = 2, .router = RouterKind::kLeastRequests}),
                   {fed(0, 4, 1), fed(1'004'000, 4, 1)});
  EXPECT_EQ(run[0].finish, t(1'004'000));
  EXPECT_EQ(run[1].unit, 0u);
  EXPECT_EQ(run[1].start, t(1'004'000));
}

// Round-robin, R = 2. Replica 0: p = 32 from 0 to 1,032,000; replica 1: p = 4
// from 0 to 1,004,000. Waiting: #2 (p = 4) on replica 0, #3 (p = 32) on
// replica 1. Replica 1 schedules #3 at 1,004,000 (ends 2,036,000), replica 0
// #2 at 1,032,000 (ends 2,036,000 too): replica 1's end was scheduled first,
// yet replica 0's step completes first.
TEST(BatchingServer, StepsEndingTogetherCompleteInReplicaOrder) {
  const Served run(small({.replicas = 2}),
                   {fed(0, 32, 1), fed(0, 4, 1), fed(1'000, 4, 1), fed(1'000, 32, 1)});
  EXPECT_EQ(run[2].finish, t(2'036'000));
  EXPECT_EQ(run[3].finish, t(2'036'000));
  EXPECT_EQ(run.harness.finish_order, (std::vector<std::uint64_t>{1, 0, 2, 3}));
}

// Async scheduling, one replica. A: p = 4, o = 3 at 0 (step 1 ends 1,004,000).
// B (p = 4, o = 1) arrives at 500,000 while it steps: pending with count 2.
// At 1,004,000 its count falls to 1; A is running, so B stays out of step 2
// (A's decode, ends 2,014,000). There its count reaches 0: it joins waiting
// and step 3 takes it with A's last decode (P = 4, D = 1: 1,014,000, ends
// 3,028,000). Step 2's record counts B as waiting.
TEST(BatchingServer, AsyncSchedulingHoldsAnArrivalForTwoStepEnds) {
  BatchingKnobs k = small({.async_scheduling = true});
  const Served run(k, {fed(0, 4, 3), fed(500'000, 4, 1)});
  EXPECT_EQ(run[1].start, t(2'014'000));
  EXPECT_EQ(run[1].finish, t(3'028'000));
  EXPECT_EQ(run[0].finish, t(3'028'000));
  ASSERT_EQ(run.steps().size(), 3u);
  EXPECT_EQ(run.steps()[1].waiting, 1u);
  EXPECT_EQ(run.steps()[1].batch_requests, 1u);
  // Without async, B starts as soon as step 1 ends.
  k.async_scheduling = false;
  EXPECT_EQ(Served(k, {fed(0, 4, 3), fed(500'000, 4, 1)})[1].start, t(1'004'000));
}

// A (p = 4, o = 1) finishes with step 1 at 1,004,000; B, pending since
// 500,000, has count 1 then, but the replica holds nothing else: it joins.
TEST(BatchingServer, AsyncPendingRequestsJoinAReplicaLeftEmpty) {
  const Served run(small({.async_scheduling = true}), {fed(0, 4, 1), fed(500'000, 4, 1)});
  EXPECT_EQ(run[1].start, t(1'004'000));
}

// Lockstep, round-robin, R = 2. At 0: A (p = 4) on replica 0 would take
// 1,004,000, B (p = 20) on replica 1 1,020,000: both step until 1,020,000
// (busy that long each). C (p = 4) reaches replica 0 at 500,000: it waits
// for 1,020,000 although its replica's own step would have ended at 1,004,000.
TEST(BatchingServer, LockstepReplicasStepUntilTheLatestEnd) {
  const Served run(small({.replicas = 2, .lockstep = true}),
                   {fed(0, 4, 1), fed(0, 20, 1), fed(500'000, 4, 1)});
  EXPECT_EQ(run[0].finish, t(1'020'000));
  EXPECT_EQ(run[1].finish, t(1'020'000));
  EXPECT_EQ(run[2].start, t(1'020'000));
  EXPECT_EQ(run[2].finish, t(2'024'000));
  ASSERT_GE(run.steps().size(), 2u);
  EXPECT_EQ(run.steps()[0].end, t(1'020'000));
  EXPECT_EQ(run.steps()[1].end, t(1'020'000));
  ASSERT_GE(run.harness.busy_periods.size(), 2u);
  EXPECT_EQ(run.harness.busy_periods[0].to, t(1'020'000));
  EXPECT_EQ(run.harness.busy_periods[1].to, t(1'020'000));
  EXPECT_EQ(run.server.usage(t(3'000'000)).busy, d(1'020'000 * 2 + 1'004'000));
}

// The step cost's extensions (model/step_cost.hpp) in the server: with 8 of
// 16 experts a token and ce = 100 us an expert read, lockstep replicas share
// the round's tokens. A (p = 4) and B (p = 20) step together: 24 tokens touch
// 16 (1 - (1/2)^24) experts, each replica reading half: X = 8 (1 - 2^-24)
// and a step of c0 + cp P + ce X. A alone would read 8 (1 - 2^-4) = 7.5.
TEST(BatchingServer, LockstepReplicasReadTheExpertsTheRoundsTokensTouch) {
  BatchingKnobs k = small({.replicas = 2, .lockstep = true});
  k.moe_experts = 16;
  k.moe_active_experts = 8;
  k.step_expert_s = 1e-4;
  const Served run(k, {fed(0, 4, 1), fed(0, 20, 1)});
  const double x = 8 * (1 - std::pow(0.5, 24));
  const double b = 1e-3 + 20e-6 + 1e-4 * x;  // B's step, the longer
  EXPECT_EQ(run[0].finish, t(std::llround(b * 1e9)));
  EXPECT_EQ(run[1].finish, t(std::llround(b * 1e9)));
  ASSERT_EQ(run.steps().size(), 2u);
  EXPECT_EQ(run.steps()[0].expert_tokens, 24u);
  EXPECT_EQ(run.steps()[0].expert_share, 2u);
  // Alone, one replica reads what its own tokens touch.
  BatchingKnobs alone = k;
  alone.replicas = 1;
  alone.lockstep = false;
  const Served one(alone, {fed(0, 4, 1)});
  EXPECT_EQ(one[0].finish,
            t(std::llround((1e-3 + 4e-6 + 1e-4 * 16 * (1 - std::pow(0.5, 4))) * 1e9)));
}

// With the roofline a step is c0 plus the larger of its memory side (here
// the weights' read, cw = 2 ms) and its compute side (1 us a prefill token):
// a prompt of 20 is memory-bound (2 ms > 20 us), not the sum.
TEST(BatchingServer, TheRooflineFormTakesTheLargerSide) {
  BatchingKnobs k = small();
  k.step_weights_s = 2e-3;
  k.step_roofline = true;
  const Served run(k, {fed(0, 20, 1)});
  EXPECT_EQ(run[0].finish, t(1'000'000 + 2'000'000));
  k.step_roofline = false;
  const Served sum(k, {fed(0, 20, 1)});
  EXPECT_EQ(sum[0].finish, t(1'000'000 + 20'000 + 2'000'000));
}

// Lockstep with async: A (p = 4, o = 2) on replica 0, B (p = 20, o = 1) on
// replica 1, both step to 1,020,000. C reaches replica 0 at 500,000 while
// they step: pending, count 2; 1 at 1,020,000 (A still runs: C stays out).
// Replica 0 alone steps A's decode to 2,030,000; C's count reaches 0 there
// and it starts.
TEST(BatchingServer, LockstepWithAsyncCountsEveryStepEnd) {
  const Served run(small({.replicas = 2, .async_scheduling = true, .lockstep = true}),
                   {fed(0, 4, 2), fed(0, 20, 1), fed(500'000, 4, 1)});
  EXPECT_EQ(run[0].finish, t(2'030'000));
  EXPECT_EQ(run[2].unit, 0u);
  EXPECT_EQ(run[2].start, t(2'030'000));
}

// The page shows a router's own knobs only when the run's router reads them:
// none for round-robin, the view and the weights for the scorer, the view,
// weight and seed for dynamo.
TEST(BatchingServer, ThePageShowsARoutersKnobsOnlyWhenItReadsThem) {
  const auto keys = [](RouterKind router) {
    BatchingKnobs k;
    k.router = router;
    std::set<std::string> out;
    for (const KnobRow& row : BatchingServer(k).describe().knobs)
      out.insert(row.key);
    return out;
  };
  const std::set<std::string> plain = keys(RouterKind::kRoundRobin);
  EXPECT_TRUE(plain.contains("router"));
  for (const char* key : {"router_refresh_s", "scorer_weights", "dynamo_weight", "router_seed",
                          "prefix_index", "kv_event_delay_s"})
    EXPECT_FALSE(plain.contains(key)) << key;
  const std::set<std::string> scorer = keys(RouterKind::kScorer);
  for (const char* key : {"router_refresh_s", "scorer_weights", "prefix_index", "kv_event_delay_s"})
    EXPECT_TRUE(scorer.contains(key)) << key;
  EXPECT_FALSE(scorer.contains("dynamo_weight"));
  const std::set<std::string> dynamo = keys(RouterKind::kDynamo);
  for (const char* key : {"router_refresh_s", "dynamo_weight", "router_seed"})
    EXPECT_TRUE(dynamo.contains(key)) << key;
  EXPECT_FALSE(dynamo.contains("scorer_weights"));
  EXPECT_TRUE(keys(RouterKind::kDataParallel).contains("router_refresh_s"));
}

// R = 2, round-robin: A (p = 4) busies replica 0 1,004,000 ns, B (p = 8)
// replica 1 1,008,000 ns. Over 10 s with idle 100 W and 700 W stepping:
// (100*10 + 600*0.001004)/3600 + (100*10 + 600*0.001008)/3600 Wh.
TEST(BatchingServer, UsageSumsTheReplicas) {
  const Served run(small({.replicas = 2}), {fed(0, 4, 1), fed(0, 8, 1)});
  const ServerUsage usage = run.server.usage(t(10'000'000'000));
  EXPECT_EQ(usage.unit, "replica");
  EXPECT_EQ(usage.units, 2u);
  EXPECT_EQ(usage.busy, d(2'012'000));
  EXPECT_DOUBLE_EQ(usage.energy_wh,
                   (100 * 10 + 600 * 0.001004) / 3600 + (100 * 10 + 600 * 0.001008) / 3600);
  std::vector<std::string> keys;
  for (const ServerFigure& f : usage.figures)
    keys.push_back(f.key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "rejected", "preemptions", "evicted_blocks", "prefix_hit_rate", "steps",
                      "avg_batch_requests", "kv_peak_utilization", "load_imbalance",
                      "router_hit_tokens_predicted", "router_hit_tokens_actual"}));
  // One request on each replica until A ends (max 1 over a mean of 1), then
  // B alone (1 over 1/2) for 4 us; round-robin expects no hit.
  EXPECT_DOUBLE_EQ(*figure(usage, "load_imbalance"), (0.001004 * 1 + 0.000004 * 2) / 0.001008);
  EXPECT_FALSE(figure(usage, "router_hit_tokens_predicted").has_value());
  ASSERT_EQ(usage.replicas.size(), 2u);
  for (std::uint32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(usage.replicas[i].replica, i);
    EXPECT_EQ(usage.replicas[i].routed, 1u);
    EXPECT_EQ(usage.replicas[i].prefix_hit_rate, 0.0);
  }
  EXPECT_DOUBLE_EQ(usage.replicas[1].busy_s, 0.001008);
  EXPECT_EQ(figure(usage, "steps"), 2.0);
  EXPECT_EQ(figure(usage, "avg_batch_requests"), 1.0);
  EXPECT_EQ(figure(usage, "prefix_hit_rate"), 0.0);  // admissions, no hit
  EXPECT_EQ(figure(usage, "kv_peak_utilization"), 2.0 / 16);
  EXPECT_TRUE(usage.figures[0].integer);
  EXPECT_FALSE(usage.figures[3].integer);
  EXPECT_DOUBLE_EQ(run.server.energy_wh(d(5'000'000'000), d(1'000'000'000)),
                   (2 * 100 * 5.0 + 600 * 1.0) / 3600);
}

TEST(BatchingServer, FiguresWithNothingToAverageAreNull) {
  BatchingKnobs k = small();
  k.max_model_len = 8;
  const Served run(k, {fed(0, 8, 1)});
  const ServerUsage usage = run.server.usage(t(60'000'000'000));
  EXPECT_EQ(figure(usage, "rejected"), 1.0);
  EXPECT_EQ(figure(usage, "prefix_hit_rate"), std::nullopt);
  EXPECT_EQ(figure(usage, "avg_batch_requests"), std::nullopt);
  EXPECT_EQ(figure(usage, "steps"), 0.0);
  EXPECT_EQ(usage.busy, d(0));
  EXPECT_DOUBLE_EQ(usage.energy_wh, 100 * 60.0 / 3600);
}

// One replica, S = 1, Tb above every prompt, no caching, cq = cd = ckv = 0,
// c0 = mg/M, cp = mc/M (M = 50000, mc = 12, mg = 2000): a request's prefill
// step lasts llround((mg + p mc)/M 1e9) = 40,000,000 + 240,000 p ns and each
// of its o - 1 decodes 40,000,000, one request at a time in arrival order:
// EdgeServer(1) with exec = llround((c mc + g mg)/M 1e9), the first token
// llround((c mc + mg)/M 1e9) after the start.
TEST(BatchingServer, OneSequenceAtATimeIsTheEdgeServersOneCore) {
  BatchingKnobs k = small({.max_num_seqs = 1, .max_num_batched_tokens = 1000, .kv_blocks = 100});
  k.block_tokens = 16;
  k.step_base_s = 2000.0 / 50000;
  k.step_prefill_token_s = 12.0 / 50000;
  k.step_decode_token_s = 0;
  k.step_decode_context_s = 0;
  k.step_prefill_pair_s = 0;
  pcg32 rng(7);
  std::vector<FedRequest> requests;
  std::int64_t arrival = 0;
  for (int i = 0; i < 300; ++i) {
    arrival += rng(3) == 0 ? 0 : rng(400'000'000);
    requests.push_back(fed(arrival, 1 + rng(900), 1 + rng(40), {}, 0, 5'000'000));
  }
  const Served run(k, requests);
  EdgeServer edge(1);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i].request;
    const auto exec =
        Duration::from_seconds((r.context_tokens * 12 + r.generated_tokens * 2000) / 50000);
    const CoreAssignment a = edge.assign(requests[i].server_arrival, exec);
    EXPECT_EQ(run[i].start, a.start) << i;
    EXPECT_EQ(run[i].finish, a.finish) << i;
    EXPECT_EQ(run[i].first_token,
              a.start + Duration::from_seconds((r.context_tokens * 12 + 2000) / 50000))
        << i;
  }
}

// The simulation calls a server observer for the reports it reads
// (ServerObserver::reads) and for no other; one that reads them all (the
// default) sees every step and every token gap, a step's busy span in the
// step; one that reads busy time but not steps sees each step's busy span.
TEST(BatchingServer, TheSimulationCallsEachServerObserverForWhatItReads) {
  struct Counter : ServerObserver {
    explicit Counter(unsigned which) : which(which) {}
    void on_busy(std::uint32_t unit, SimTime from, SimTime to) override {
      ++busy;
      spans.push_back({unit, from, to});
    }
    void on_step(const StepRecord& s) override {
      ++steps;
      spans.push_back({s.replica, s.start, s.end});
    }
    void on_token_gaps(std::span<const Duration> gaps) override { this->gaps += gaps.size(); }
    unsigned reads() const override { return which; }
    unsigned which;
    std::uint64_t busy = 0, steps = 0, gaps = 0;
    std::vector<std::tuple<std::uint32_t, SimTime, SimTime>> spans;  // busy or step
  };
  Settings settings;
  settings.devices = 3;
  const Trace trace = read_azure_csv(test::seed_trace());
  const GeneratedRequests generated = generate_recorded(settings, trace);
  DeviceFleet fleet(settings.devices);
  const NetworkPath network(settings.hops);
  BatchingServer server(BatchingKnobs{});
  Simulation simulation(generated.tasks, fleet, network, server);
  Counter all(ServerObserver::kBusy | ServerObserver::kSteps | ServerObserver::kTokenGaps);
  Counter steps(ServerObserver::kSteps), gaps(ServerObserver::kTokenGaps);
  Counter busy_and_gaps(ServerObserver::kBusy | ServerObserver::kTokenGaps);
  for (Counter* c : {&all, &steps, &gaps, &busy_and_gaps})
    simulation.add_server_observer(*c);
  simulation.run();
  ASSERT_GT(all.steps, 0u);
  ASSERT_GT(all.gaps, 0u);
  EXPECT_EQ(all.busy, 0u);  // in the steps
  EXPECT_EQ(steps.steps, all.steps);
  EXPECT_EQ(steps.busy + steps.gaps, 0u);
  EXPECT_EQ(gaps.gaps, all.gaps);
  EXPECT_EQ(gaps.busy + gaps.steps, 0u);
  EXPECT_EQ(busy_and_gaps.busy, all.steps);  // a step a busy span
  EXPECT_EQ(busy_and_gaps.spans, all.spans);
  EXPECT_EQ(busy_and_gaps.gaps, all.gaps);
  EXPECT_EQ(busy_and_gaps.steps, 0u);
}

}  // namespace
}  // namespace infersim
