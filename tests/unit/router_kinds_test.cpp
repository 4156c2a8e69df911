#include "model/router_kinds.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "model/batching_knobs.hpp"
#include "model/data_parallel_router.hpp"
#include "model/kv_aware_router.hpp"
#include "model/least_requests_router.hpp"
#include "model/prefix_router.hpp"
#include "model/replica_scheduler.hpp"
#include "model/round_robin_router.hpp"
#include "model/router.hpp"

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
      {"round-robin", typeid(RoundRobinRouter)},
      {"least-requests", typeid(LeastRequestsRouter)},
      {"kv-aware", typeid(KvAwareRouter)},
      {"prefix", typeid(PrefixRouter)},
      {"vllm-dp", typeid(DataParallelRouter)}};
  EXPECT_THAT(router_names(),
              ElementsAre("round-robin", "least-requests", "kv-aware", "prefix", "vllm-dp"));
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

TEST(RouterKinds, PrefixAloneMayNotRouteAmongDecodeReplicas) {
  EXPECT_THAT(decode_router_names(),
              ElementsAre("round-robin", "least-requests", "kv-aware", "vllm-dp"));
  EXPECT_FALSE(routes_decode(RouterKind::kPrefix));
  EXPECT_TRUE(routes_decode(RouterKind::kDataParallel));
  EXPECT_EQ(router_names_text(false), "round-robin, least-requests, kv-aware, prefix or vllm-dp");
  EXPECT_EQ(router_names_text(true), "round-robin, least-requests, kv-aware or vllm-dp");
}

TEST(RouterKinds, OnlyVllmDpRefreshesAtMultiplesOfItsPeriodInNanoseconds) {
  BatchingKnobs k = router_knobs();
  k.router_refresh_s = 0.25;
  for (const std::string& name : router_names()) {
    RouterKind kind = RouterKind::kRoundRobin;
    ASSERT_TRUE(parse_router_kind(name, kind));
    const std::optional<Duration> period = make_router(kind, k)->refresh_period();
    if (name == "vllm-dp") {
      ASSERT_TRUE(period.has_value());
      EXPECT_EQ(period->count_ns(), 250'000'000);
    } else {
      EXPECT_FALSE(period.has_value()) << name;
    }
  }
  k.router_refresh_s = 1e-12;  // never below 1 ns
  EXPECT_EQ(make_router(RouterKind::kDataParallel, k)->refresh_period()->count_ns(), 1);
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

}  // namespace
}  // namespace infersim
