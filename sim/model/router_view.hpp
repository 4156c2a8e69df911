// What the scorer and dynamo routers (BATCHING.md section 8) read of a
// replica's load: exact at each request when router_refresh_s is 0, else as
// it stood at the latest refresh instant with the router's own picks since
// then added, as vLLM's data-parallel client counts its own. The prefix hit
// is not part of the view: it is read from the replica's cache at the
// request (a precise index whose events arrive at once).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/sim_time.hpp"

namespace infersim {

struct BatchedRequest;
class ReplicaScheduler;

// One replica's load as a router sees it.
struct ReplicaLoad {
  std::uint64_t queued = 0;         // |waiting|, pending counted
  std::uint64_t running = 0;        // |running|
  std::int64_t waiting_tokens = 0;  // W: tokens of the queued requests still to compute
  std::uint32_t used_blocks = 0;    // U: blocks with a count of 1 or more
};

class RouterView {
 public:
  // `refresh_s` 0: exact; else refreshed at its multiples (rounded to ns,
  // at least 1 ns).
  explicit RouterView(double refresh_s);

  // None when exact.
  std::optional<Duration> period() const { return period_; }
  // The loads of `active` now become the view; the router's picks are forgotten.
  void refresh(std::span<ReplicaScheduler* const> active);
  // Replica `s`'s load as the router sees it now.
  ReplicaLoad load(const ReplicaScheduler& s) const;
  // The router sent `r` to `s`: counted in the view until the next refresh
  // (one more queued, its tokens to compute added to W).
  void picked(const ReplicaScheduler& s, const BatchedRequest& r);

 private:
  std::optional<Duration> period_;
  std::vector<ReplicaLoad> loads_;  // by replica index; a replica not seen at a refresh: 0s
};

}  // namespace infersim
