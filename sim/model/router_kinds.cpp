#include "model/router_kinds.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/batching_knobs.hpp"
#include "model/data_parallel_router.hpp"
#include "model/dynamo_router.hpp"
#include "model/kv_aware_router.hpp"
#include "model/least_requests_router.hpp"
#include "model/prefix_router.hpp"
#include "model/round_robin_router.hpp"
#include "model/scorer_router.hpp"

namespace infersim {
namespace {

std::unique_ptr<Router> make_round_robin(const BatchingKnobs&) {
  return std::make_unique<RoundRobinRouter>();
}
std::unique_ptr<Router> make_least_requests(const BatchingKnobs&) {
  return std::make_unique<LeastRequestsRouter>();
}
std::unique_ptr<Router> make_kv_aware(const BatchingKnobs& k) {
  return std::make_unique<KvAwareRouter>(k.block_tokens);
}
std::unique_ptr<Router> make_prefix(const BatchingKnobs& k) {
  return std::make_unique<PrefixRouter>(k.block_tokens);
}
std::unique_ptr<Router> make_data_parallel(const BatchingKnobs& k) {
  // router_refresh_s rounded to ns once, at least 1 ns (§8).
  return std::make_unique<DataParallelRouter>(
      Duration::ns(std::max<std::int64_t>(1, std::llround(k.router_refresh_s * 1e9))));
}

PrefixIndex prefix_index_of(const BatchingKnobs& k) {
  return PrefixIndex(k.prefix_index, k.kv_event_delay_s, k.prefix_index_blocks);
}
std::unique_ptr<Router> make_scorer(const BatchingKnobs& k) {
  return std::make_unique<ScorerRouter>(k.scorer_weights, k.block_tokens, k.router_refresh_s,
                                        prefix_index_of(k));
}
std::unique_ptr<Router> make_dynamo(const BatchingKnobs& k) {
  return std::make_unique<DynamoRouter>(k.block_tokens, k.dynamo_weight, k.dynamo_temperature,
                                        k.router_refresh_s, k.router_seed, prefix_index_of(k));
}

struct RouterEntry {
  RouterKind kind;
  const char* name;
  bool decode;  // may route among decode replicas (§12)
  std::unique_ptr<Router> (*make)(const BatchingKnobs&);
};

// Every router, in the order the names are listed.
constexpr RouterEntry kRouterTable[] = {
    {RouterKind::kRoundRobin, "round-robin", true, make_round_robin},
    {RouterKind::kLeastRequests, "least-requests", true, make_least_requests},
    {RouterKind::kKvAware, "kv-aware", true, make_kv_aware},
    {RouterKind::kPrefix, "prefix", false, make_prefix},
    {RouterKind::kDataParallel, "vllm-dp", true, make_data_parallel},
    {RouterKind::kScorer, "scorer", false, make_scorer},
    {RouterKind::kDynamo, "dynamo", true, make_dynamo},
};

const RouterEntry* router_entry(RouterKind kind) {
  for (const RouterEntry& e : kRouterTable) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

std::vector<std::string> router_names_where(bool decode_only) {
  std::vector<std::string> names;
  for (const RouterEntry& e : kRouterTable) {
    if (e.decode || !decode_only) names.emplace_back(e.name);
  }
  return names;
}

}  // namespace

std::string to_string(PrefixIndexKind kind) {
  return kind == PrefixIndexKind::kPrecise ? "precise" : "approximate";
}

bool parse_prefix_index_kind(const std::string& text, PrefixIndexKind& kind) {
  if (text == "precise") {
    kind = PrefixIndexKind::kPrecise;
  } else if (text == "approximate") {
    kind = PrefixIndexKind::kApproximate;
  } else {
    return false;
  }
  return true;
}

std::string to_string(RouterKind kind) {
  const RouterEntry* e = router_entry(kind);
  return e ? e->name : "?";
}

bool parse_router_kind(const std::string& text, RouterKind& kind) {
  for (const RouterEntry& e : kRouterTable) {
    if (text == e.name) {
      kind = e.kind;
      return true;
    }
  }
  return false;
}

const std::vector<std::string>& router_names() {
  static const std::vector<std::string> kNames = router_names_where(false);
  return kNames;
}

const std::vector<std::string>& decode_router_names() {
  static const std::vector<std::string> kNames = router_names_where(true);
  return kNames;
}

std::string router_names_text(bool decode) {
  const std::vector<std::string>& names = decode ? decode_router_names() : router_names();
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += i == 0 ? "" : i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

bool routes_decode(RouterKind kind) {
  const RouterEntry* e = router_entry(kind);
  return e && e->decode;
}

std::unique_ptr<Router> make_router(RouterKind kind, const BatchingKnobs& knobs) {
  const RouterEntry* e = router_entry(kind);
  if (!e) throw std::invalid_argument("batching.router: unknown router");
  return e->make(knobs);
}

}  // namespace infersim
