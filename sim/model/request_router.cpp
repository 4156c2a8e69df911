#include "model/request_router.hpp"

#include <algorithm>

namespace infersim {

RequestRouter::RequestRouter(RouterKind kind, std::int64_t block_tokens)
    : kind_(kind), block_tokens_(block_tokens) {}

std::uint32_t RequestRouter::least_requests(std::span<ReplicaScheduler* const> replicas) {
  std::uint32_t best = 0;
  for (std::uint32_t i = 1; i < replicas.size(); ++i) {
    if (replicas[i]->requests() < replicas[best]->requests()) best = i;
  }
  return best;
}

void RequestRouter::counts_for(std::uint32_t index) {
  if (index < waiting_.size()) return;
  waiting_.resize(index + 1, 0);
  running_.resize(index + 1, 0);
}

void RequestRouter::refresh(std::span<ReplicaScheduler* const> active) {
  std::fill(waiting_.begin(), waiting_.end(), 0);
  std::fill(running_.begin(), running_.end(), 0);
  for (const ReplicaScheduler* s : active) {
    const std::uint32_t x = s->index();
    counts_for(x);
    waiting_[x] = s->queued();
    running_[x] = s->running();
  }
}

std::uint32_t RequestRouter::route(const BatchedRequest& r,
                                   std::span<ReplicaScheduler* const> replicas) {
  const auto count = static_cast<std::uint32_t>(replicas.size());
  switch (kind_) {
    case RouterKind::kRoundRobin:
      return static_cast<std::uint32_t>(routed_++ % count);
    case RouterKind::kLeastRequests:
      return least_requests(replicas);
    case RouterKind::kDataParallel: {
      // vLLM's least 4 x waiting + running; the pick counts as waiting until
      // the next refresh.
      std::uint32_t best = 0;
      std::uint64_t best_score = 0;
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t x = replicas[i]->index();
        const std::uint64_t score =
            x < waiting_.size() ? 4 * waiting_[x] + running_[x] : std::uint64_t{0};
        if (i == 0 || score < best_score) {
          best = i;
          best_score = score;
        }
      }
      const std::uint32_t x = replicas[best]->index();
      counts_for(x);
      ++waiting_[x];
      return best;
    }
    case RouterKind::kKvAware: {
      // ceil((W + p - hit) / B) + U, the least; p is the request's num_tokens
      // (a transferred one's is p + 1, section 12).
      std::uint32_t best = 0;
      std::int64_t best_cost = 0;
      for (std::uint32_t i = 0; i < count; ++i) {
        const ReplicaScheduler& s = *replicas[i];
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
    case RouterKind::kPrefix: {
      std::uint64_t lo = replicas[0]->requests(), hi = lo;
      for (const ReplicaScheduler* s : replicas) {
        lo = std::min(lo, s->requests());
        hi = std::max(hi, s->requests());
      }
      if (hi - lo > 32 && static_cast<double>(hi) > 1.1 * static_cast<double>(lo)) {
        return least_requests(replicas);
      }
      std::uint32_t best = 0;
      std::uint32_t best_hit = 0;
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t h = replicas[i]->hit_blocks(r);
        if (h > best_hit) {
          best = i;
          best_hit = h;
        }
      }
      const double hit = static_cast<double>(std::int64_t{best_hit} * block_tokens_);
      if (hit / static_cast<double>(r.prompt) > 0.5) return best;
      return least_requests(replicas);
    }
  }
  return 0;
}

}  // namespace infersim
