#include "model/data_parallel_router.hpp"

#include <algorithm>

namespace infersim {

void DataParallelRouter::counts_for(std::uint32_t index) {
  if (index < waiting_.size()) return;
  waiting_.resize(index + 1, 0);
  running_.resize(index + 1, 0);
}

void DataParallelRouter::refresh(std::span<ReplicaScheduler* const> active) {
  std::fill(waiting_.begin(), waiting_.end(), 0);
  std::fill(running_.begin(), running_.end(), 0);
  for (const ReplicaScheduler* s : active) {
    const std::uint32_t x = s->index();
    counts_for(x);
    waiting_[x] = s->queued();
    running_[x] = s->running();
  }
}

std::uint32_t DataParallelRouter::route(const BatchedRequest&,
                                        std::span<ReplicaScheduler* const> active) {
  // The pick counts as waiting until the next refresh.
  std::uint32_t best = 0;
  std::uint64_t best_score = 0;
  for (std::uint32_t i = 0; i < active.size(); ++i) {
    const std::uint32_t x = active[i]->index();
    const std::uint64_t score =
        x < waiting_.size() ? 4 * waiting_[x] + running_[x] : std::uint64_t{0};
    if (i == 0 || score < best_score) {
      best = i;
      best_score = score;
    }
  }
  const std::uint32_t x = active[best]->index();
  counts_for(x);
  ++waiting_[x];
  return best;
}

}  // namespace infersim
