// BATCHING.md §8's round-robin: the j-th request it routes (from 0) goes to
// the (j mod n)-th of the n replicas active then (§11).
#pragma once

#include <cstdint>

#include "model/router.hpp"

namespace infersim {

class RoundRobinRouter final : public Router {
 public:
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active) override;

 private:
  std::uint64_t routed_ = 0;  // turns taken (this router's routed requests)
};

}  // namespace infersim
