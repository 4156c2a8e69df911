// BATCHING.md section 8's scorer router (llm-d's scheduler): each active
// replica scored in [0, 1] by each scorer, higher better, the replica of the
// largest weighted sum taken (ties to the lowest index). The scorers read the
// replicas' load through a RouterView (exact, or refreshed every
// router_refresh_s with the router's own picks counted) and the prefix hit
// from the replica's cache at the request:
//   queue           (qmax - q) / (qmax - qmin) over the replicas, 1 when all equal
//   running         the same of the running counts
//   kv              1 - U / K, the replica's share of blocks free
//   prefix          min(1, hit B / p), the prompt's share found cached
//   predicted_ttft  the same as queue of t, the seconds the replica's class
//                   takes to prefill its queue's tokens and the request's
//                   uncached ones beside its running decodes
// It may not route among decode replicas (section 12): its prefix and
// predicted-TTFT scorers weigh a prompt still to compute.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model/router_kinds.hpp"
#include "model/view_router.hpp"

namespace infersim {

class ScorerRouter final : public ViewRouter {
 public:
  ScorerRouter(const ScorerWeights& weights, std::int64_t block_tokens, double refresh_s,
               PrefixIndex index)
      : ViewRouter(refresh_s, std::move(index)), weights_(weights), block_tokens_(block_tokens) {}
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active) override;

 private:
  ScorerWeights weights_;
  std::int64_t block_tokens_;  // B
  // Scratch for one route, by position in `active`.
  std::vector<ReplicaLoad> loads_;
  std::vector<double> ttft_, score_;
  std::vector<std::int64_t> hit_;
};

// t of the scorer's predicted_ttft: `tokens` prefilled on replica `s` (its
// class's step cost and max_num_batched_tokens) in steps beside `running`
// decodes, each step taking at most max_num_batched_tokens - running of them
// (at least 1), attention pairs left out.
double predicted_prefill_seconds(const ReplicaScheduler& s, std::int64_t tokens,
                                 std::uint64_t running);

}  // namespace infersim
