#include "model/router_kinds.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "model/batching_knobs.hpp"
#include "model/batching_server.hpp"
#include "model/data_parallel_router.hpp"
#include "model/dynamo_router.hpp"
#include "model/kv_aware_router.hpp"
#include "model/least_requests_router.hpp"
#include "model/prefix_index.hpp"
#include "model/prefix_router.hpp"
#include "model/replica_scheduler.hpp"
#include "model/round_robin_router.hpp"
#include "model/router.hpp"
#include "model/scorer_router.hpp"
#include "model/step_cost.hpp"
#include "test_support.hpp"
#include "trace/trace_reader.hpp"
#include "unit/inspectors.hpp"
#include "unit/server_harness.hpp"

namespace infersim {
namespace {

using ::testing::ElementsAre;

BatchingKnobs router_knobs() {
  BatchingKnobs k;
  k.kv_blocks = 64;
  k.block_tokens = 16;
  return k;
}

// Replicas for a router to choose among: replica i has loads[i] requests
// waiting, each a prompt of 32 tokens with no block ids (no hit anywhere).
struct RouterReplicas {
  explicit RouterReplicas(const std::vector<int>& loads) {
    const BatchingKnobs k = router_knobs();
    for (std::uint32_t i = 0; i < loads.size(); ++i) {
      owned.push_back(std::make_unique<ReplicaScheduler>(i, k, requests));
      for (int j = 0; j < loads[i]; ++j)
        owned.back()->enqueue(add_request());
    }
    for (const auto& s : owned)
      active.push_back(s.get());
  }
  std::uint32_t add_request() {
    requests.emplace_back();
    requests.back().prompt = 32;
    requests.back().num_tokens = 32;
    return static_cast<std::uint32_t>(requests.size() - 1);
  }
  // The positions `router` picks for `count` requests in turn, none of them
  // joining a replica.
  std::vector<std::uint32_t> picks(Router& router, int count) {
    const std::uint32_t slot = add_request();
    std::vector<std::uint32_t> out;
    for (int i = 0; i < count; ++i)
      out.push_back(router.route(requests[slot], active));
    return out;
  }

  std::vector<BatchedRequest> requests;
  std::vector<std::unique_ptr<ReplicaScheduler>> owned;
  std::vector<ReplicaScheduler*> active;
};

TEST(RouterKinds, EachNameMakesTheRouterOfItsRule) {
  const std::map<std::string, std::type_index> classes = {
      {"round-robin", typeid(RoundRobinRouter)}, {"least-requests", typeid(LeastRequestsRouter)},
      {"kv-aware", typeid(KvAwareRouter)},       {"prefix", typeid(PrefixRouter)},
      {"vllm-dp", typeid(DataParallelRouter)},   {"scorer", typeid(ScorerRouter)},
      {"dynamo", typeid(DynamoRouter)}};
  EXPECT_THAT(router_names(), ElementsAre("round-robin", "least-requests", "kv-aware", "prefix",
                                          "vllm-dp", "scorer", "dynamo"));
  for (const std::string& name : router_names()) {
    RouterKind kind = RouterKind::kRoundRobin;
    ASSERT_TRUE(parse_router_kind(name, kind)) << name;
    EXPECT_EQ(to_string(kind), name);
    const std::unique_ptr<Router> router = make_router(kind, router_knobs());
    ASSERT_NE(router, nullptr);
    const Router& made = *router;
    EXPECT_EQ(std::type_index(typeid(made)), classes.at(name)) << name;
  }
}

TEST(RouterKinds, PrefixAndScorerMayNotRouteAmongDecodeReplicas) {
  EXPECT_THAT(decode_router_names(),
              ElementsAre("round-robin", "least-requests", "kv-aware", "vllm-dp", "dynamo"));
  EXPECT_FALSE(routes_decode(RouterKind::kPrefix));
  EXPECT_FALSE(routes_decode(RouterKind::kScorer));
  EXPECT_TRUE(routes_decode(RouterKind::kDataParallel));
  EXPECT_EQ(router_names_text(false),
            "round-robin, least-requests, kv-aware, prefix, vllm-dp, scorer or dynamo");
  EXPECT_EQ(router_names_text(true), "round-robin, least-requests, kv-aware, vllm-dp or dynamo");
}

TEST(RouterKinds, TheRoutersOfAViewRefreshAtMultiplesOfItsPeriodInNanoseconds) {
  BatchingKnobs k = router_knobs();
  k.router_refresh_s = 0.25;
  for (const std::string& name : router_names()) {
    RouterKind kind = RouterKind::kRoundRobin;
    ASSERT_TRUE(parse_router_kind(name, kind));
    const std::optional<Duration> period = make_router(kind, k)->refresh_period();
    if (name == "vllm-dp" || name == "scorer" || name == "dynamo") {
      ASSERT_TRUE(period.has_value());
      EXPECT_EQ(period->count_ns(), 250'000'000);
    } else {
      EXPECT_FALSE(period.has_value()) << name;
    }
  }
  k.router_refresh_s = 1e-12;  // never below 1 ns
  EXPECT_EQ(make_router(RouterKind::kDataParallel, k)->refresh_period()->count_ns(), 1);
  EXPECT_EQ(make_router(RouterKind::kScorer, k)->refresh_period()->count_ns(), 1);
  // 0: vllm-dp every ns; the scorer and dynamo read the replicas exact.
  k.router_refresh_s = 0;
  EXPECT_EQ(make_router(RouterKind::kDataParallel, k)->refresh_period()->count_ns(), 1);
  EXPECT_FALSE(make_router(RouterKind::kScorer, k)->refresh_period().has_value());
  EXPECT_FALSE(make_router(RouterKind::kDynamo, k)->refresh_period().has_value());
}

// Three replicas with 3, 1 and 2 requests waiting (32 tokens each, no hits).
// Round-robin takes turns; least-requests and the prefix rule (loads close,
// no hit) take replica 1; kv-aware's costs are ceil((W + 32) / 16) + 0 = 8, 4
// and 6: replica 1.
TEST(Routers, EachRoutesByItsOwnRule) {
  RouterReplicas replicas({3, 1, 2});
  const BatchingKnobs k = router_knobs();
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kRoundRobin, k), 4), ElementsAre(0, 1, 2, 0));
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kLeastRequests, k), 2), ElementsAre(1, 1));
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kKvAware, k), 1), ElementsAre(1));
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kPrefix, k), 1), ElementsAre(1));
}

// vllm-dp routes by 4 w + r as of its latest refresh plus its own picks: none
// yet, all count 0 and its picks spread (0, then 1, 2, then 0 again); after a
// refresh the scores are 12, 4 and 8: replica 1, then 1 again (8 ties 8, the
// lower index), then 2 (12 against 8).
TEST(Routers, VllmDpRoutesByTheCountsOfItsLatestRefreshAndItsPicks) {
  RouterReplicas replicas({3, 1, 2});
  const std::unique_ptr<Router> router = make_router(RouterKind::kDataParallel, router_knobs());
  EXPECT_THAT(replicas.picks(*router, 4), ElementsAre(0, 1, 2, 0));
  router->refresh(replicas.active);
  EXPECT_THAT(replicas.picks(*router, 3), ElementsAre(1, 1, 2));
}

// The scorer with the queue scorer alone: exact, the shortest queue (1, every
// time: the picks join no replica). With a view never refreshed, every
// replica counts 0 and its own picks spread its requests (0, 1, 2, 0); after
// a refresh the queues are 3, 1 and 2 plus its picks: 1, then 1 (2 ties 2,
// the lower index), then 2 (queues 3, 3, 2).
TEST(Routers, TheScorerRoutesByItsViewAndItsOwnPicks) {
  RouterReplicas replicas({3, 1, 2});
  BatchingKnobs k = router_knobs();
  k.scorer_weights = {1, 0, 0, 0, 0};
  k.router_refresh_s = 0;
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kScorer, k), 3), ElementsAre(1, 1, 1));
  k.router_refresh_s = 0.1;
  const std::unique_ptr<Router> router = make_router(RouterKind::kScorer, k);
  EXPECT_THAT(replicas.picks(*router, 4), ElementsAre(0, 1, 2, 0));
  router->refresh(replicas.active);
  EXPECT_THAT(replicas.picks(*router, 3), ElementsAre(1, 1, 2));
}

// Scores in [0, 1] weighed and summed: queues 3, 1, 2 score 0, 1 and 0.5;
// with nothing admitted kv scores 1 everywhere and the prefix 0. Queue 1 and
// kv 5 leave replica 1 ahead (6 against 5.5 and 5).
TEST(Routers, TheScorerTakesTheLargestWeightedSum) {
  RouterReplicas replicas({3, 1, 2});
  BatchingKnobs k = router_knobs();
  k.router_refresh_s = 0;
  k.scorer_weights = {1, 0, 5, 0, 0};
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kScorer, k), 1), ElementsAre(1));
  // Weights of 0 alone: every sum is 0, the lowest index.
  k.scorer_weights = {0, 0, 0, 0, 0};
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kScorer, k), 1), ElementsAre(0));
}

// The predicted TTFT of a class: 20000 tokens beside 192 decodes with a budget
// of 8192 are two steps of 8000 and one of 4000, each at c0 + cp P + cd D.
TEST(Routers, ThePredictedTtftPrefillsInTheClasssChunksBesideItsDecodes) {
  BatchingKnobs k = router_knobs();
  k.max_num_batched_tokens = 8192;
  const StepCost cost = StepCost::of(k);
  std::vector<BatchedRequest> requests;
  ReplicaScheduler s(0, k, requests);
  s.set_step_cost(&cost);
  const double c0 = k.step_base_s, cp = k.step_prefill_token_s, cd = k.step_decode_token_s;
  EXPECT_NEAR(predicted_prefill_seconds(s, 20000, 192),
              2 * (c0 + cp * 8000 + cd * 192) + (c0 + cp * 4000 + cd * 192), 1e-12);
  EXPECT_NEAR(predicted_prefill_seconds(s, 16000, 192), 2 * (c0 + cp * 8000 + cd * 192), 1e-12);
  // More decodes than the budget: a token a step.
  EXPECT_NEAR(predicted_prefill_seconds(s, 2, 9000), 2 * (c0 + cp + cd * 9000), 1e-12);
}

// Two idle replicas, the first of a class with a step base ten times the
// second's: the predicted-TTFT scorer sends a request to the faster one until
// its queue's prefill outweighs the slower one's empty queue.
TEST(Routers, ThePredictedTtftSendsLessToASlowerClass) {
  RouterReplicas replicas({0, 0});
  BatchingKnobs slow = router_knobs(), fast = router_knobs();
  slow.step_base_s = 0.1;
  fast.step_base_s = 0.01;
  const StepCost slow_cost = StepCost::of(slow), fast_cost = StepCost::of(fast);
  replicas.owned[0]->set_step_cost(&slow_cost);
  replicas.owned[1]->set_step_cost(&fast_cost);
  BatchingKnobs k = router_knobs();
  k.router_refresh_s = 0;
  k.scorer_weights = {0, 0, 0, 0, 1};
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kScorer, k), 1), ElementsAre(1));
  // Twelve 32-token requests waiting on the fast one: 416 tokens, 0.01 +
  // 416 cp = 0.018 s there against 0.1 + 32 cp on the slow one: still the fast.
  for (int i = 0; i < 12; ++i)
    replicas.owned[1]->enqueue(replicas.add_request());
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kScorer, k), 1), ElementsAre(1));
  // 5000 more tokens: 0.01 + 5416 cp = 0.117 s, above the slow one's 0.1006.
  replicas.requests.emplace_back();
  replicas.requests.back().prompt = replicas.requests.back().num_tokens = 5000;
  replicas.owned[1]->enqueue(static_cast<std::uint32_t>(replicas.requests.size() - 1));
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kScorer, k), 1), ElementsAre(0));
}

// Dynamo's cost with w = 1 and an exact view is kv-aware's: 8, 4 and 6, so
// replica 1; with w = 0 the prompt weighs nothing and every cost is U = 0: the
// lowest index.
TEST(Routers, DynamoWithWeightOneAndAnExactViewIsKvAware) {
  RouterReplicas replicas({3, 1, 2});
  BatchingKnobs k = router_knobs();
  k.router_refresh_s = 0;
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kDynamo, k), 2), ElementsAre(1, 1));
  k.dynamo_weight = 0;
  EXPECT_THAT(replicas.picks(*make_router(RouterKind::kDynamo, k), 1), ElementsAre(0));
}

// With a temperature, a draw from the softmax of the costs scaled to [0, 1]:
// costs 2, 6 and 10 at T = 1 give exp(0), exp(-0.5) and exp(-1) normalized
// (0.506, 0.307, 0.186); 20000 draws land within 0.01 of them, the same ones
// for the same seed and others for another.
TEST(Routers, DynamoWithATemperatureDrawsFromTheSoftmaxOfItsSeed) {
  RouterReplicas replicas({0, 2, 4});
  BatchingKnobs k = router_knobs();
  k.router_refresh_s = 0;
  k.dynamo_temperature = 1;
  k.router_seed = 7;
  const std::vector<std::uint32_t> picks =
      replicas.picks(*make_router(RouterKind::kDynamo, k), 20000);
  const double e = std::exp(-0.5), f = std::exp(-1.0), sum = 1 + e + f;
  const double expected[] = {1 / sum, e / sum, f / sum};
  for (std::uint32_t i = 0; i < 3; ++i) {
    const double share =
        static_cast<double>(std::count(picks.begin(), picks.end(), i)) / picks.size();
    EXPECT_NEAR(share, expected[i], 0.01) << i;
  }
  EXPECT_EQ(replicas.picks(*make_router(RouterKind::kDynamo, k), 20000), picks);
  k.router_seed = 8;
  EXPECT_NE(replicas.picks(*make_router(RouterKind::kDynamo, k), 20000), picks);
}

// The Mooncake hour (its block ids, 512 tokens each) as the harness feeds it:
// each record at its instant, straight to the server.
struct MooncakeHour {
  MooncakeHour() {
    TraceSource source;
    source.path = test::published_trace("mooncake_conversation_trace.jsonl");
    trace = read_trace(source);
    for (std::size_t i = 0; i < trace.records.size(); ++i) {
      const TraceRecord& t = trace.records[i];
      requests.push_back(test::fed(t.offset_ns, t.context_tokens, t.generated_tokens,
                                   trace.hash_ids_of(i), trace.block_id_tokens));
    }
  }
  Trace trace;
  std::vector<test::FedRequest> requests;
};

BatchingKnobs mooncake_knobs(RouterKind router) {
  BatchingKnobs k;
  k.replicas = 8;
  k.router = router;
  k.router_refresh_s = 0;
  k.kv_blocks = 8000;  // evictions happen: the hits change over the hour
  return k;
}

// Dynamo at w = 1, T = 0 with an exact view makes kv-aware's pick on every
// request of the Mooncake hour: the same replica, start and finish.
TEST(Routers, DynamoIsKvAwareOnEveryRequestOfTheMooncakeHour) {
  const MooncakeHour hour;
  BatchingServer kv(mooncake_knobs(RouterKind::kKvAware));
  BatchingServer dynamo(mooncake_knobs(RouterKind::kDynamo));
  test::ServerHarness a(kv), b(dynamo);
  a.run(hour.requests);
  b.run(hour.requests);
  std::set<std::uint32_t> replicas;
  for (std::size_t i = 0; i < hour.requests.size(); ++i) {
    ASSERT_EQ(a.reports[i].unit, b.reports[i].unit) << i;
    ASSERT_EQ(a.reports[i].finish, b.reports[i].finish) << i;
    ASSERT_EQ(a.reports[i].prefix_hit_tokens, b.reports[i].prefix_hit_tokens) << i;
    replicas.insert(a.reports[i].unit);
  }
  EXPECT_EQ(replicas.size(), 8u);  // the rule spreads the hour: the comparison is not trivial
}

// Routes as the prefix router does and asks a prefix-only scorer the same
// question: where the prefix rule routes by the hit (loads within its bounds,
// the largest hit over half the prompt), the scorer's pick must be the same.
class ShadowedPrefixRouter final : public Router {
 public:
  explicit ShadowedPrefixRouter(std::int64_t block_tokens)
      : prefix_(block_tokens),
        scorer_({0, 0, 0, 1, 0}, block_tokens, 0, PrefixIndex(PrefixIndexKind::kPrecise, 0, 1)),
        block_tokens_(block_tokens) {}
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active) override {
    const std::uint32_t pick = prefix_.route(r, active);
    std::uint64_t lo = active[0]->requests(), hi = lo;
    std::uint32_t best_hit = 0;
    for (const ReplicaScheduler* s : active) {
      lo = std::min(lo, s->requests());
      hi = std::max(hi, s->requests());
      best_hit = std::max(best_hit, s->hit_blocks(r));
    }
    const bool balanced =
        !(hi - lo > 32 && static_cast<double>(hi) > 1.1 * static_cast<double>(lo));
    const bool by_hit = balanced && static_cast<double>(std::int64_t{best_hit} * block_tokens_) /
                                            static_cast<double>(r.prompt) >
                                        0.5;
    if (by_hit) {
      ++by_hit_;
      differ_ += scorer_.route(r, active) != pick;
    }
    return pick;
  }
  std::uint64_t by_hit_ = 0, differ_ = 0;

 private:
  PrefixRouter prefix_;
  ScorerRouter scorer_;
  std::int64_t block_tokens_;
};

TEST(Routers, APrefixOnlyScorerPicksAsThePrefixRuleWhereThatRoutesByTheHitOverTheMooncakeHour) {
  const MooncakeHour hour;
  BatchingServer server(mooncake_knobs(RouterKind::kPrefix));
  auto shadow = std::make_unique<ShadowedPrefixRouter>(16);
  const ShadowedPrefixRouter& watched = *shadow;
  test::ServerInspector::set_router(server, std::move(shadow));
  test::ServerHarness harness(server);
  harness.run(hour.requests);
  EXPECT_GT(watched.by_hit_, 1000u);  // 1575 of the hour's 12,031 requests
  EXPECT_EQ(watched.differ_, 0u);
}

// A request of `prompt` tokens whose blocks of 16 tokens carry `ids`, one an id.
BatchedRequest request_with_ids(const std::vector<std::uint32_t>& ids, std::int64_t prompt) {
  BatchedRequest r;
  r.prompt = r.num_tokens = prompt;
  r.prompt_blocks = PromptBlocks(ids, 16, prompt, 16);
  return r;
}

std::uint64_t identity_of(std::uint32_t id) {
  return std::uint64_t{id} << 32;
}

// An approximate index holds the identities of the prompts it routed, the
// least recently used dropped past its capacity, and never hears of
// evictions; a precise one with a delay holds what the events it was handed
// say, until a replica's cache is cleared.
TEST(PrefixIndexes, ApproximateKeepsWhatItRoutedAndPreciseWhatItWasTold) {
  const std::vector<std::uint32_t> a = {1, 2, 3}, b = {7, 8};
  const BatchedRequest ra = request_with_ids(a, 64), rb = request_with_ids(b, 48);
  std::vector<BatchedRequest> requests;
  ReplicaScheduler s(0, router_knobs(), requests);
  PrefixIndex approximate(PrefixIndexKind::kApproximate, 0, 4);
  EXPECT_EQ(approximate.hit_blocks(s, ra), 0u);
  approximate.routed(s, ra);
  EXPECT_EQ(approximate.hit_blocks(s, ra), 3u);  // capped at (64 - 1) div 16 = 3
  approximate.routed(s, rb);                     // 5 identities: id 1 goes
  EXPECT_EQ(approximate.hit_blocks(s, ra), 0u);
  EXPECT_EQ(approximate.hit_blocks(s, rb), 2u);
  approximate.routed(s, ra);  // 1, 2 and 3 the most recent: 7, the least, goes
  EXPECT_EQ(approximate.hit_blocks(s, ra), 3u);
  EXPECT_EQ(approximate.hit_blocks(s, rb), 0u);
  EXPECT_FALSE(approximate.event_delay().has_value());

  PrefixIndex precise(PrefixIndexKind::kPrecise, 0.05, 0);
  ASSERT_TRUE(precise.event_delay().has_value());
  EXPECT_EQ(precise.event_delay()->count_ns(), 50'000'000);
  for (const std::uint32_t id : a)
    precise.event(0, {identity_of(id), true});
  EXPECT_EQ(precise.hit_blocks(s, ra), 3u);
  precise.event(0, {identity_of(2), false});  // block 1 evicted: the run stops at it
  EXPECT_EQ(precise.hit_blocks(s, ra), 1u);
  precise.event(0, {PrefixIndex::kCleared, false});
  EXPECT_EQ(precise.hit_blocks(s, ra), 0u);
  // With no delay it reads the cache itself (empty here).
  PrefixIndex exact(PrefixIndexKind::kPrecise, 0, 0);
  EXPECT_FALSE(exact.event_delay().has_value());
  exact.routed(s, ra);
  EXPECT_EQ(exact.hit_blocks(s, ra), 0u);
}

}  // namespace
}  // namespace infersim
