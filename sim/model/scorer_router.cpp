#include "model/scorer_router.hpp"

#include <algorithm>
#include <optional>

#include "model/step_cost.hpp"

namespace infersim {
namespace {

// (max - x) / (max - min) of `x` over `values`, 1 when they are all equal.
template <class Values, class Get>
void add_min_max_score(const Values& values, Get get, double weight, std::vector<double>& score) {
  if (weight == 0) return;
  double lo = get(values[0]), hi = lo;
  for (const auto& v : values) {
    lo = std::min(lo, get(v));
    hi = std::max(hi, get(v));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    score[i] += weight * (hi == lo ? 1.0 : (hi - get(values[i])) / (hi - lo));
  }
}

}  // namespace

double predicted_prefill_seconds(const ReplicaScheduler& s, std::int64_t tokens,
                                 std::uint64_t running) {
  const StepCost& cost = *s.step_cost();
  const std::int64_t budget = s.max_batched_tokens();
  const std::int64_t chunk =
      std::max<std::int64_t>(1, budget - static_cast<std::int64_t>(std::min<std::uint64_t>(
                                             running, static_cast<std::uint64_t>(budget))));
  const auto step = [&](std::int64_t n) {
    StepWork w;
    w.prefill_tokens = static_cast<std::uint64_t>(n);
    w.decode_requests = running;
    w.expert_tokens = static_cast<std::uint64_t>(n) + running;
    return cost.seconds(w);
  };
  const std::int64_t full = tokens / chunk, rest = tokens % chunk;
  return static_cast<double>(full) * (full > 0 ? step(chunk) : 0.0) + (rest > 0 ? step(rest) : 0.0);
}

std::uint32_t ScorerRouter::route(const BatchedRequest& r,
                                  std::span<ReplicaScheduler* const> active) {
  const std::size_t n = active.size();
  loads_.resize(n);
  score_.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    loads_[i] = view_.load(*active[i]);
  const ScorerWeights& w = weights_;
  add_min_max_score(
      loads_, [](const ReplicaLoad& l) { return static_cast<double>(l.queued); }, w.queue, score_);
  add_min_max_score(
      loads_, [](const ReplicaLoad& l) { return static_cast<double>(l.running); }, w.running,
      score_);
  if (w.kv != 0) {
    for (std::size_t i = 0; i < n; ++i) {
      const double blocks = active[i]->pool().blocks();
      score_[i] += w.kv * (1 - loads_[i].used_blocks / blocks);
    }
  }
  const bool reads_hits = w.prefix != 0 || w.predicted_ttft != 0;
  if (reads_hits) {
    ttft_.resize(n);
    hit_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t hit = std::int64_t{index_.hit_blocks(*active[i], r)} * block_tokens_;
      hit_[i] = hit;
      score_[i] +=
          w.prefix * std::min(1.0, static_cast<double>(hit) / static_cast<double>(r.prompt));
      if (w.predicted_ttft != 0) {
        const std::int64_t tokens = loads_[i].waiting_tokens + r.num_tokens - hit;
        ttft_[i] = predicted_prefill_seconds(*active[i], tokens, loads_[i].running);
      }
    }
    add_min_max_score(
        ttft_, [](double t) { return t; }, w.predicted_ttft, score_);
  }
  std::uint32_t best = 0;
  for (std::uint32_t i = 1; i < n; ++i) {
    if (score_[i] > score_[best]) best = i;
  }
  picked(*active[best], r, reads_hits ? std::optional<std::int64_t>(hit_[best]) : std::nullopt);
  return best;
}

}  // namespace infersim
