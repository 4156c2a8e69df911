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
  kDataParallel
};

// Its name: "round-robin", "least-requests", "kv-aware", "prefix", "vllm-dp".
std::string to_string(RouterKind kind);
// A name of router_names(); false for anything else (kind left as it was).
bool parse_router_kind(const std::string& text, RouterKind& kind);
// Every router's name, in the table's order.
const std::vector<std::string>& router_names();
// Those that may route among a disaggregated fleet's decode replicas (§12).
const std::vector<std::string>& decode_router_names();
// The names in words for a message or a flag's help: "round-robin,
// least-requests, kv-aware, prefix or vllm-dp" (`decode`: the decode routers').
std::string router_names_text(bool decode);
// Whether `kind` may route among decode replicas (§12: all but prefix, whose
// rule weighs a prompt still to compute).
bool routes_decode(RouterKind kind);

// The router `kind` names, reading the fleet-wide knobs it needs
// (block_tokens, router_refresh_s) from `knobs`.
std::unique_ptr<Router> make_router(RouterKind kind, const BatchingKnobs& knobs);

}  // namespace infersim
