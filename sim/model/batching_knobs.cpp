#include "model/batching_knobs.hpp"

#include <cmath>
#include <utility>

#include "core/input_error.hpp"

namespace infersim {
namespace {

constexpr std::int64_t kDefaultModelLen = 131072;

std::string key(const char* name) {
  return std::string("batching.") + name;
}

}  // namespace

std::int64_t BatchingKnobs::model_len() const {
  if (max_model_len) return *max_model_len;
  // min(131072, K*B) without forming a product that could overflow.
  return kv_blocks > kDefaultModelLen / block_tokens ? kDefaultModelLen : kv_blocks * block_tokens;
}

void check_batching_knobs(const BatchingKnobs& k, std::uint32_t block_id_tokens,
                          const std::string& source) {
  const auto fail = [&](const std::string& keys, const std::string& what) {
    throw InputError(source, 0, keys, what);
  };
  const std::pair<const char*, std::int64_t> counts[] = {
      {"replicas", k.replicas},
      {"max_num_seqs", k.max_num_seqs},
      {"max_num_batched_tokens", k.max_num_batched_tokens},
      {"block_tokens", k.block_tokens},
      {"kv_blocks", k.kv_blocks},
  };
  for (const auto& [name, value] : counts) {
    if (value < 1) fail(key(name), "must be at least 1, not " + std::to_string(value));
  }
  if (k.max_model_len && *k.max_model_len < 1) {
    fail(key("max_model_len"), "must be at least 1, not " + std::to_string(*k.max_model_len));
  }
  // Replica and block numbers are 32-bit; a block's first token must fit too.
  if (k.replicas > kMaxKvBlocks) {
    fail(key("replicas"), "must be at most " + std::to_string(kMaxKvBlocks));
  }
  if (k.kv_blocks > kMaxKvBlocks) {
    fail(key("kv_blocks"), "must be at most " + std::to_string(kMaxKvBlocks));
  }
  if (k.block_tokens > kMaxKvBlocks) {
    fail(key("block_tokens"), "must be at most " + std::to_string(kMaxKvBlocks));
  }
  const std::pair<const char*, double> amounts[] = {
      {"step_base_s", k.step_base_s},
      {"step_prefill_token_s", k.step_prefill_token_s},
      {"step_prefill_pair_s", k.step_prefill_pair_s},
      {"step_decode_token_s", k.step_decode_token_s},
      {"step_decode_context_s", k.step_decode_context_s},
      {"step_weights_s", k.step_weights_s},
      {"step_expert_s", k.step_expert_s},
      {"gpu_idle_w", k.gpu_idle_w},
      {"gpu_max_w", k.gpu_max_w},
      {"kv_bytes_per_token", k.kv_bytes_per_token},
      {"kv_link_latency_s", k.kv_link_latency_s},
  };
  for (const auto& [name, value] : amounts) {
    if (!(std::isfinite(value) && value >= 0)) {
      fail(key(name), "must be a finite number >= 0");
    }
  }
  if (k.moe_experts < 0 || k.moe_active_experts < 0 || k.moe_active_experts > k.moe_experts ||
      (k.moe_experts > 0 && k.moe_active_experts < 1)) {
    fail(key("moe_experts") + ", " + key("moe_active_experts"),
         "a token goes to between 1 and moe_experts experts (0 and 0 for a dense model), not " +
             std::to_string(k.moe_active_experts) + " of " + std::to_string(k.moe_experts));
  }
  if (k.step_expert_s > 0 && k.moe_experts == 0) {
    fail(key("step_expert_s") + ", " + key("moe_experts"),
         "step_expert_s needs moe_experts: a dense model reads no expert");
  }
  if (!(std::isfinite(k.router_refresh_s) && k.router_refresh_s >= 1e-9)) {
    fail(key("router_refresh_s"), "must be a finite number of at least 1e-9 (1 ns)");
  }
  if (!(std::isfinite(k.kv_link_gbps) && k.kv_link_gbps > 0)) {
    fail(key("kv_link_gbps"), "must be a finite number > 0");
  }
  if (!routes_decode(k.decode_router)) {
    fail(key("decode_router"),
         "must be " + router_names_text(true) + ", not " + to_string(k.decode_router));
  }
  if (k.gpu_max_w < k.gpu_idle_w) {
    fail(key("gpu_max_w") + ", " + key("gpu_idle_w"), "gpu_max_w must not be below gpu_idle_w");
  }
  // L > K*B, as (L - 1) div B >= K: no product that could overflow.
  const std::int64_t len = k.model_len();
  if ((len - 1) / k.block_tokens >= k.kv_blocks) {
    fail(key("max_model_len") + ", " + key("kv_blocks") + ", " + key("block_tokens"),
         "max_model_len " + std::to_string(len) + " exceeds kv_blocks * block_tokens");
  }
  if (k.max_num_seqs > k.max_num_batched_tokens) {
    fail(key("max_num_seqs") + ", " + key("max_num_batched_tokens"),
         "max_num_seqs must not exceed max_num_batched_tokens");
  }
  if (block_id_tokens != 0 && block_id_tokens % k.block_tokens != 0) {
    fail(key("block_tokens"), "must divide the trace's block size of " +
                                  std::to_string(block_id_tokens) + " tokens (its block ids)");
  }
}

}  // namespace infersim
