// BATCHING.md §8's prefix router (SGLang's cache-aware rule): as
// least-requests when the replicas' loads are far apart (hi - lo > 32 and hi >
// 1.1 lo), else the replica with the longest hit when it is more than half the
// prompt, else as least-requests. It may not route among decode replicas
// (§12): a transferred request's prompt is no longer to compute.
#pragma once

#include <cstdint>

#include "model/router.hpp"

namespace infersim {

class PrefixRouter final : public Router {
 public:
  explicit PrefixRouter(std::int64_t block_tokens) : block_tokens_(block_tokens) {}
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active) override;

 private:
  std::int64_t block_tokens_;  // B
};

}  // namespace infersim
