// Where a request goes on reaching the batching server (BATCHING.md section
// 8): round-robin, fewest requests, Dynamo's KV-aware cost, or SGLang's
// cache-aware rule; ties to the lowest index. Routers see the active replicas
// only (section 11), in index order, and their exact state, pending requests
// counted as waiting ones.
#pragma once

#include <cstdint>
#include <span>

#include "model/batching_knobs.hpp"
#include "model/replica_scheduler.hpp"

namespace infersim {

class RequestRouter {
 public:
  RequestRouter(RouterKind kind, std::int64_t block_tokens);

  // The position in `active` (the active replicas, in index order; at least
  // one) of the replica for `r` (not yet in any replica), given their state now.
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active);

 private:
  static std::uint32_t least_requests(std::span<ReplicaScheduler* const> replicas);

  RouterKind kind_;
  std::int64_t block_tokens_;
  std::uint64_t routed_ = 0;  // round-robin turns taken (this router's routed requests)
};

}  // namespace infersim
