// Where a request goes on reaching the batching server (BATCHING.md §8): the
// interface every routing rule implements. Each rule is a class in a file of
// its own, made by name from the one table of model/router_kinds.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/sim_time.hpp"
#include "model/replica_scheduler.hpp"

namespace infersim {

// A router sees the active replicas only (§11), in index order, and their
// exact state, pending requests counted as waiting ones; one that refreshes
// routes by what it took at its latest refresh instead. Ties go to the lowest
// index.
class Router {
 public:
  virtual ~Router() = default;
  // The position in `active` (the active replicas, in index order; at least
  // one) of the replica for `r` (not yet in any replica), given their state now.
  virtual std::uint32_t route(const BatchedRequest& r,
                              std::span<ReplicaScheduler* const> active) = 0;
  // The refresh instants are the multiples of this period (at least 1 ns);
  // none: the router reads the replicas as they are at each request.
  virtual std::optional<Duration> refresh_period() const { return std::nullopt; }
  // At the first instant of the run at or after a refresh instant, before any
  // of its events (the server calls it): `active` as it stands then.
  virtual void refresh(std::span<ReplicaScheduler* const> /*active*/) {}
  // A router whose prefix index follows the replicas' KV events (section 8's
  // precise index with a delay): how late they reach it; none: it takes none.
  virtual std::optional<Duration> kv_event_delay() const { return std::nullopt; }
  // Replica `replica`'s event (PrefixIndex::kCleared: its cache is new),
  // reaching the router now; the server hands them over in the order they
  // happened.
  virtual void kv_event(std::uint32_t /*replica*/, const KvEvent& /*e*/) {}
  // The hit in tokens it expected at the replica it picked last, when it
  // routes by one (section 9's router_hit_tokens_predicted).
  virtual std::optional<std::int64_t> predicted_hit_tokens() const { return std::nullopt; }
};

// The position of the replica with the fewest |waiting| + |running| (pending
// counted), the lowest on a tie: §8's least-requests, and the prefix rule's
// fallback.
inline std::uint32_t fewest_requests(std::span<ReplicaScheduler* const> replicas) {
  std::uint32_t best = 0;
  for (std::uint32_t i = 1; i < replicas.size(); ++i) {
    if (replicas[i]->requests() < replicas[best]->requests()) best = i;
  }
  return best;
}

}  // namespace infersim
