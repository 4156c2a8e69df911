#include "model/prefix_router.hpp"

#include <algorithm>

namespace infersim {

std::uint32_t PrefixRouter::route(const BatchedRequest& r,
                                  std::span<ReplicaScheduler* const> active) {
  std::uint64_t lo = active[0]->requests(), hi = lo;
  for (const ReplicaScheduler* s : active) {
    lo = std::min(lo, s->requests());
    hi = std::max(hi, s->requests());
  }
  if (hi - lo > 32 && static_cast<double>(hi) > 1.1 * static_cast<double>(lo)) {
    return fewest_requests(active);
  }
  std::uint32_t best = 0;
  std::uint32_t best_hit = 0;
  for (std::uint32_t i = 0; i < active.size(); ++i) {
    const std::uint32_t h = active[i]->hit_blocks(r);
    if (h > best_hit) {
      best = i;
      best_hit = h;
    }
  }
  const double hit = static_cast<double>(std::int64_t{best_hit} * block_tokens_);
  if (hit / static_cast<double>(r.prompt) > 0.5) return best;
  return fewest_requests(active);
}

}  // namespace infersim
