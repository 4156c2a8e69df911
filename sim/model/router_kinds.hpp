// The routers a run may name (settings' batching.router and
// batching.decode_router; BATCHING.md §8 and §12): each one's name, whether
// it may route among decode replicas, and the one place a name becomes a
// router (model/router.hpp). The settings' checks, their messages and the
// flags' help take the names from here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace infersim {

struct BatchingKnobs;
class Router;

// The routers, in the table's order.
enum class RouterKind : std::uint8_t {
  kRoundRobin,
  kLeastRequests,
  kKvAware,
  kPrefix,
  kDataParallel,
  kScorer,
  kDynamo
};

// The scorer router's weights (section 8), llm-d's default profile's by
// default: queue 2, kv 2, prefix 3.
struct ScorerWeights {
  double queue = 2;
  double running = 0;
  double kv = 2;
  double prefix = 3;
  double predicted_ttft = 0;
};

// How the scorer and dynamo routers know what a replica has cached (section
// 8; model/prefix_index.hpp).
enum class PrefixIndexKind : std::uint8_t { kPrecise, kApproximate };

// "precise" or "approximate".
std::string to_string(PrefixIndexKind kind);
// False for another word (kind left as it was).
bool parse_prefix_index_kind(const std::string& text, PrefixIndexKind& kind);

// Its name: "round-robin", "least-requests", "kv-aware", "prefix", "vllm-dp",
// "scorer", "dynamo".
std::string to_string(RouterKind kind);
// A name of router_names(); false for anything else (kind left as it was).
bool parse_router_kind(const std::string& text, RouterKind& kind);
// Every router's name, in the table's order.
const std::vector<std::string>& router_names();
// Those that may route among a disaggregated fleet's decode replicas (§12).
const std::vector<std::string>& decode_router_names();
// The names in words for a message or a flag's help: "round-robin,
// least-requests, kv-aware, prefix, vllm-dp, scorer or dynamo" (`decode`:
// the decode routers').
std::string router_names_text(bool decode);
// Whether `kind` may route among decode replicas (§12: all but prefix and
// scorer, whose rules weigh a prompt still to compute).
bool routes_decode(RouterKind kind);

// The router `kind` names, reading the fleet-wide knobs it needs
// (block_tokens, router_refresh_s, the scorer's weights, dynamo's weight
// and temperature, router_seed, the prefix index's knobs) from `knobs`.
std::unique_ptr<Router> make_router(RouterKind kind, const BatchingKnobs& knobs);

}  // namespace infersim
