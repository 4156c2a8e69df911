// BATCHING.md section 8's dynamo router (NVIDIA Dynamo's KV router): the
// cost of replica i is w ceil((W + p - hit) / B) + U, with W and U from a
// RouterView (exact, or refreshed every router_refresh_s with its own picks
// counted) and hit from the replica's cache at the request. At temperature 0
// the least cost (ties to the lowest index: with w = 1 and an exact view,
// kv-aware); above 0 a draw from Dynamo's softmax over the costs scaled to
// [0, 1]: p_i proportional to exp(-(c_i - cmin) / ((cmax - cmin) T)), each
// replica alike when the costs are, the first replica whose cumulative
// probability reaches u, u one uniform01 draw of pcg32 seeded with
// router_seed (the last replica when rounding leaves u above them all).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <pcg_random.hpp>

#include "model/view_router.hpp"

namespace infersim {

class DynamoRouter final : public ViewRouter {
 public:
  DynamoRouter(std::int64_t block_tokens, double weight, double temperature, double refresh_s,
               std::uint64_t seed, PrefixIndex index)
      : ViewRouter(refresh_s, std::move(index)),
        block_tokens_(block_tokens),
        weight_(weight),
        temperature_(temperature),
        rng_(seed) {}
  std::uint32_t route(const BatchedRequest& r, std::span<ReplicaScheduler* const> active) override;

 private:
  std::uint32_t draw(const std::vector<double>& cost);

  std::int64_t block_tokens_;  // B
  double weight_;              // w
  double temperature_;         // T
  pcg32 rng_;
  // Scratch, by position in `active`.
  std::vector<double> cost_, probability_;
  std::vector<std::int64_t> hit_;
};

}  // namespace infersim
