#include "model/least_requests_router.hpp"

namespace infersim {

std::uint32_t LeastRequestsRouter::route(const BatchedRequest&,
                                         std::span<ReplicaScheduler* const> active) {
  return fewest_requests(active);
}

}  // namespace infersim
