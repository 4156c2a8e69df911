#include "model/batching_knobs.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/input_error.hpp"

namespace infersim {
namespace {

// The message of the InputError `check` throws, or "" when it throws none.
std::string error_of(const BatchingKnobs& knobs, std::uint32_t block_id_tokens = 0) {
  try {
    check_batching_knobs(knobs, block_id_tokens, "settings.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(BatchingKnobs, DefaultsAreThoseOfTheSpec) {
  const BatchingKnobs k;
  EXPECT_EQ(k.replicas, 1);
  EXPECT_EQ(k.router, RouterKind::kRoundRobin);
  EXPECT_EQ(k.max_num_seqs, 1024);
  EXPECT_EQ(k.max_num_batched_tokens, 8192);
  EXPECT_EQ(k.block_tokens, 16);
  EXPECT_EQ(k.kv_blocks, 31250);
  EXPECT_FALSE(k.max_model_len.has_value());
  EXPECT_EQ(k.model_len(), 131072);  // min(131072, 31250 * 16 = 500000)
  EXPECT_TRUE(k.prefix_caching);
  EXPECT_TRUE(k.reserve_full_prompt);
  EXPECT_EQ(k.step_base_s, 0.0065);
  EXPECT_EQ(k.step_prefill_token_s, 1.98e-5);
  EXPECT_EQ(k.step_prefill_pair_s, 1.2e-9);
  EXPECT_EQ(k.step_decode_token_s, 2.0e-5);
  EXPECT_EQ(k.step_decode_context_s, 4.0e-8);
  EXPECT_EQ(k.gpu_idle_w, 100);
  EXPECT_EQ(k.gpu_max_w, 700);
  EXPECT_FALSE(k.async_scheduling);
  EXPECT_FALSE(k.lockstep);
  EXPECT_EQ(error_of(k), "");
  EXPECT_EQ(error_of(k, 512), "");
}

TEST(BatchingKnobs, ModelLengthDefaultsToTheCacheWhenSmaller) {
  BatchingKnobs k;
  k.kv_blocks = 100;
  EXPECT_EQ(k.model_len(), 1600);
  k.max_model_len = 900;
  EXPECT_EQ(k.model_len(), 900);
}

TEST(BatchingKnobs, RouterNamesGoBothWays) {
  for (const RouterKind kind : {RouterKind::kRoundRobin, RouterKind::kLeastRequests,
                                RouterKind::kKvAware, RouterKind::kPrefix}) {
    RouterKind parsed = RouterKind::kRoundRobin;
    ASSERT_TRUE(parse_router_kind(to_string(kind), parsed));
    EXPECT_EQ(parsed, kind);
  }
  EXPECT_EQ(to_string(RouterKind::kKvAware), "kv-aware");
  EXPECT_EQ(to_string(RouterKind::kLeastRequests), "least-requests");
  RouterKind kind = RouterKind::kPrefix;
  EXPECT_FALSE(parse_router_kind("Prefix", kind));
  EXPECT_FALSE(parse_router_kind("", kind));
  EXPECT_EQ(kind, RouterKind::kPrefix);
}

TEST(BatchingKnobs, ModelLengthAboveTheCacheNamesTheThreeKeys) {
  BatchingKnobs k;
  k.kv_blocks = 10;
  k.block_tokens = 16;
  k.max_model_len = 161;  // 10 * 16 = 160
  EXPECT_EQ(error_of(k),
            "settings.json: batching.max_model_len, batching.kv_blocks, batching.block_tokens: "
            "max_model_len 161 exceeds kv_blocks * block_tokens");
  k.max_model_len = 160;
  EXPECT_EQ(error_of(k), "");
}

TEST(BatchingKnobs, MoreSequencesThanBatchedTokensIsRefused) {
  BatchingKnobs k;
  k.max_num_seqs = 8193;
  EXPECT_EQ(error_of(k),
            "settings.json: batching.max_num_seqs, batching.max_num_batched_tokens: "
            "max_num_seqs must not exceed max_num_batched_tokens");
  k.max_num_seqs = 8192;
  EXPECT_EQ(error_of(k), "");
}

TEST(BatchingKnobs, BlockSizeMustDivideTheTracesBlockSize) {
  BatchingKnobs k;
  k.block_tokens = 48;
  k.kv_blocks = 20000;
  EXPECT_EQ(error_of(k, 512),
            "settings.json: batching.block_tokens: must divide the trace's block size of 512 "
            "tokens (its block ids)");
  EXPECT_EQ(error_of(k, 0), "");  // no ids: any block size
  k.block_tokens = 64;
  EXPECT_EQ(error_of(k, 512), "");
}

TEST(BatchingKnobs, CountsBelowOneAreRefused) {
  const std::pair<const char*, std::function<void(BatchingKnobs&)>> cases[] = {
      {"batching.replicas", [](BatchingKnobs& k) { k.replicas = 0; }},
      {"batching.max_num_seqs", [](BatchingKnobs& k) { k.max_num_seqs = -1; }},
      {"batching.max_num_batched_tokens", [](BatchingKnobs& k) { k.max_num_batched_tokens = 0; }},
      {"batching.block_tokens", [](BatchingKnobs& k) { k.block_tokens = 0; }},
      {"batching.kv_blocks", [](BatchingKnobs& k) { k.kv_blocks = 0; }},
      {"batching.max_model_len", [](BatchingKnobs& k) { k.max_model_len = 0; }},
  };
  for (const auto& [name, spoil] : cases) {
    BatchingKnobs k;
    spoil(k);
    EXPECT_EQ(error_of(k).rfind(std::string("settings.json: ") + name + ": must be at least 1", 0),
              0u)
        << error_of(k);
  }
}

// Block numbers, and their places in a replica's identity map, are 32-bit.
TEST(BatchingKnobs, CountsBeyondTheBlockNumbersAreRefused) {
  BatchingKnobs k;
  k.kv_blocks = kMaxKvBlocks + 1;
  EXPECT_EQ(error_of(k), "settings.json: batching.kv_blocks: must be at most 67108864");
  k.kv_blocks = kMaxKvBlocks;
  EXPECT_EQ(error_of(k), "");
  k.replicas = kMaxKvBlocks + 1;
  EXPECT_EQ(error_of(k), "settings.json: batching.replicas: must be at most 67108864");
}

TEST(BatchingKnobs, NegativeCostsAndPowersAreRefused) {
  const std::pair<const char*, double BatchingKnobs::*> amounts[] = {
      {"step_base_s", &BatchingKnobs::step_base_s},
      {"step_prefill_token_s", &BatchingKnobs::step_prefill_token_s},
      {"step_prefill_pair_s", &BatchingKnobs::step_prefill_pair_s},
      {"step_decode_token_s", &BatchingKnobs::step_decode_token_s},
      {"step_decode_context_s", &BatchingKnobs::step_decode_context_s},
      {"gpu_idle_w", &BatchingKnobs::gpu_idle_w},
      {"gpu_max_w", &BatchingKnobs::gpu_max_w},
  };
  for (const auto& [name, member] : amounts) {
    BatchingKnobs k;
    k.*member = -1e-9;
    EXPECT_EQ(error_of(k),
              std::string("settings.json: batching.") + name + ": must be a finite number >= 0");
    k.*member = 0;
    if (std::string(name) != "gpu_max_w") {
      EXPECT_EQ(error_of(k), "") << name;
    }
  }
}

TEST(BatchingKnobs, MaximumPowerBelowIdleIsRefused) {
  BatchingKnobs k;
  k.gpu_idle_w = 300;
  k.gpu_max_w = 299.5;
  EXPECT_EQ(error_of(k),
            "settings.json: batching.gpu_max_w, batching.gpu_idle_w: gpu_max_w must not be "
            "below gpu_idle_w");
  k.gpu_max_w = 300;
  EXPECT_EQ(error_of(k), "");
}

}  // namespace
}  // namespace infersim
