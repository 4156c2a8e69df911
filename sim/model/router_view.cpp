#include "model/router_view.hpp"

#include <algorithm>
#include <cmath>

#include "model/replica_scheduler.hpp"

namespace infersim {

RouterView::RouterView(double refresh_s) {
  if (refresh_s > 0) {
    period_ = Duration::ns(std::max<std::int64_t>(1, std::llround(refresh_s * 1e9)));
  }
}

void RouterView::refresh(std::span<ReplicaScheduler* const> active) {
  std::fill(loads_.begin(), loads_.end(), ReplicaLoad{});
  for (const ReplicaScheduler* s : active) {
    if (s->index() >= loads_.size()) loads_.resize(s->index() + 1);
    loads_[s->index()] = {s->queued(), s->running(), s->waiting_tokens(), s->used_blocks()};
  }
}

ReplicaLoad RouterView::load(const ReplicaScheduler& s) const {
  if (!period_) return {s.queued(), s.running(), s.waiting_tokens(), s.used_blocks()};
  return s.index() < loads_.size() ? loads_[s.index()] : ReplicaLoad{};
}

void RouterView::picked(const ReplicaScheduler& s, const BatchedRequest& r) {
  if (!period_) return;
  if (s.index() >= loads_.size()) loads_.resize(s.index() + 1);
  ReplicaLoad& l = loads_[s.index()];
  ++l.queued;
  l.waiting_tokens += ReplicaScheduler::queued_tokens(r);
}

}  // namespace infersim
