#include "model/round_robin_router.hpp"

namespace infersim {

std::uint32_t RoundRobinRouter::route(const BatchedRequest&,
                                      std::span<ReplicaScheduler* const> active) {
  return static_cast<std::uint32_t>(routed_++ % active.size());
}

}  // namespace infersim
