// BATCHING.md §8's kv-aware router (Dynamo's cost, weight 1): the least
// ceil((W + p - hit) / B) + U, W the replica's waiting tokens still to
// compute, hit the request's hit there, U its blocks in use.
#pragma once

#include <cstdint>

#include "model/router.hpp"

namespace infersim {

class KvAwareRouter final : public Router {
 public:
  explicit KvAwareRouter(std::int64_t block_tokens) : block_tokens_(block_tokens) {}
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active) override;

 private:
  std::int64_t block_tokens_;  // B
};

}  // namespace infersim
