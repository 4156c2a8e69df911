#include "model/kv_aware_router.hpp"

namespace infersim {

std::uint32_t KvAwareRouter::route(const BatchedRequest& r,
                                   std::span<ReplicaScheduler* const> active) {
  // p is the request's num_tokens (a transferred one's is p + 1, §12).
  std::uint32_t best = 0;
  std::int64_t best_cost = 0;
  for (std::uint32_t i = 0; i < active.size(); ++i) {
    const ReplicaScheduler& s = *active[i];
    const std::int64_t hit = std::int64_t{s.hit_blocks(r)} * block_tokens_;
    const std::int64_t cost =
        (s.waiting_tokens() + r.num_tokens - hit + block_tokens_ - 1) / block_tokens_ +
        s.used_blocks();
    if (i == 0 || cost < best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace infersim
