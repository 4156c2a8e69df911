// Where a request goes on reaching the batching server (BATCHING.md section
// 8): round-robin, fewest requests, Dynamo's KV-aware cost, SGLang's
// cache-aware rule, or vLLM's data-parallel balancer; ties to the lowest
// index. Routers see the active replicas only (section 11), in index order,
// and their exact state, pending requests counted as waiting ones; the
// data-parallel balancer sees the counts of the latest refresh instead, with
// its own picks since added to waiting.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/batching_knobs.hpp"
#include "model/replica_scheduler.hpp"

namespace infersim {

class RequestRouter {
 public:
  RequestRouter(RouterKind kind, std::int64_t block_tokens);

  // The position in `active` (the active replicas, in index order; at least
  // one) of the replica for `r` (not yet in any replica), given their state now.
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active);
  // vllm-dp: `active`'s waiting and running counts now become the ones it
  // routes by (a replica not among them counts none).
  void refresh(std::span<ReplicaScheduler* const> active);

 private:
  static std::uint32_t least_requests(std::span<ReplicaScheduler* const> replicas);
  // vllm-dp: room in the counts for replica `index` (0 and 0 until counted).
  void counts_for(std::uint32_t index);

  RouterKind kind_;
  std::int64_t block_tokens_;
  std::uint64_t routed_ = 0;  // round-robin turns taken (this router's routed requests)
  // vllm-dp: by replica index, the waiting (with its picks since) and running
  // counts of the latest refresh.
  std::vector<std::uint64_t> waiting_, running_;
};

}  // namespace infersim
