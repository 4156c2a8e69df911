#include "model/dynamo_router.hpp"

#include <algorithm>
#include <cmath>

#include "core/random.hpp"
#include "model/replica_scheduler.hpp"

namespace infersim {

std::uint32_t DynamoRouter::route(const BatchedRequest& r,
                                  std::span<ReplicaScheduler* const> active) {
  cost_.resize(active.size());
  hit_.resize(active.size());
  std::uint32_t best = 0;
  for (std::uint32_t i = 0; i < active.size(); ++i) {
    const ReplicaScheduler& s = *active[i];
    const ReplicaLoad load = view_.load(s);
    const std::int64_t hit = std::int64_t{index_.hit_blocks(s, r)} * block_tokens_;
    hit_[i] = hit;
    // r.num_tokens is p (a transferred request's p + 1, section 12), as kv-aware reads it.
    const std::int64_t prefill_blocks =
        (load.waiting_tokens + r.num_tokens - hit + block_tokens_ - 1) / block_tokens_;
    cost_[i] = weight_ * static_cast<double>(prefill_blocks) + load.used_blocks;
    if (cost_[i] < cost_[best]) best = i;
  }
  if (temperature_ > 0) best = draw(cost_);
  picked(*active[best], r, hit_[best]);
  return best;
}

std::uint32_t DynamoRouter::draw(const std::vector<double>& cost) {
  const auto [lo, hi] = std::minmax_element(cost.begin(), cost.end());
  const double cmin = *lo, range = *hi - *lo;
  probability_.resize(cost.size());
  double sum = 0;
  for (std::size_t i = 0; i < cost.size(); ++i) {
    probability_[i] = range == 0 ? 1.0 : std::exp(-(cost[i] - cmin) / (range * temperature_));
    sum += probability_[i];
  }
  const double u = uniform01(rng_);
  double cumulative = 0;
  for (std::uint32_t i = 0; i < cost.size(); ++i) {
    cumulative += probability_[i] / sum;
    if (u <= cumulative) return i;
  }
  return static_cast<std::uint32_t>(cost.size() - 1);
}

}  // namespace infersim
