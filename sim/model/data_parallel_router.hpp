// BATCHING.md §8's vllm-dp router (vLLM's data-parallel client): the least 4
// w + r, with w and r a replica's waiting (pending included) and running
// counts as they stood at the latest refresh instant, and this router's picks
// since then counted in w. The refresh instants are the multiples of
// router_refresh_s (rounded to ns); a replica not active at one counts 0 and 0.
#pragma once

#include <cstdint>
#include <vector>

#include "model/router.hpp"

namespace infersim {

class DataParallelRouter final : public Router {
 public:
  explicit DataParallelRouter(Duration refresh_period) : period_(refresh_period) {}
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active) override;
  std::optional<Duration> refresh_period() const override { return period_; }
  // `active`'s waiting and running counts now become the ones it routes by,
  // its own picks forgotten.
  void refresh(std::span<ReplicaScheduler* const> active) override;

 private:
  // Room in the counts for replica `index` (0 and 0 until counted).
  void counts_for(std::uint32_t index);

  Duration period_;
  // By replica index, the waiting (with its picks since) and running counts
  // of the latest refresh.
  std::vector<std::uint64_t> waiting_, running_;
};

}  // namespace infersim
