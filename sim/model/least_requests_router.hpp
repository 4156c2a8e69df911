// BATCHING.md §8's least-requests: the replica with the fewest |waiting| +
// |running|, pending requests counted.
#pragma once

#include <cstdint>

#include "model/router.hpp"

namespace infersim {

class LeastRequestsRouter final : public Router {
 public:
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active) override;
};

}  // namespace infersim
