#include "model/batching_knobs.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/input_error.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

// The knobs checked as settings.json's, for a trace whose block ids stand for
// `block_id_tokens` tokens each (0: no ids).
void check(const BatchingKnobs& knobs, std::uint32_t block_id_tokens = 0) {
  check_batching_knobs(knobs, block_id_tokens, "settings.json");
}

// The message of the InputError `check` must throw.
std::string error_of(const BatchingKnobs& knobs, std::uint32_t block_id_tokens = 0) {
  return test::error_of([&] { check(knobs, block_id_tokens); });
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
  EXPECT_NO_THROW(check(k));
  EXPECT_NO_THROW(check(k, 512));
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

// Knobs past a limit they share, refused with the keys named; then the
// change that brings them back to it, accepted (block ids of
// `block_id_tokens` tokens checked against). `past` names max_model_len
// always, the one knob without a default initializer.
struct Limit {
  const char* name;
  BatchingKnobs past;
  std::string message;
  std::function<void(BatchingKnobs&)> meet;
  std::uint32_t block_id_tokens = 0;
};

TEST(BatchingKnobs, KnobsPastTheirLimitsAreRefusedAndAtThemAccepted) {
  using K = BatchingKnobs;
  const Limit limits[] = {
      // 10 * 16 = 160
      {"a model length above the cache names the three keys",
       {.block_tokens = 16, .kv_blocks = 10, .max_model_len = 161},
       "settings.json: batching.max_model_len, batching.kv_blocks, batching.block_tokens: "
       "max_model_len 161 exceeds kv_blocks * block_tokens",
       [](K& k) { k.max_model_len = 160; }},
      {"more sequences than batched tokens",
       {.max_num_seqs = 8193, .max_model_len = std::nullopt},
       "settings.json: batching.max_num_seqs, batching.max_num_batched_tokens: "
       "max_num_seqs must not exceed max_num_batched_tokens",
       [](K& k) { k.max_num_seqs = 8192; }},
      {"a block size that does not divide the trace's",
       {.block_tokens = 48, .kv_blocks = 20000, .max_model_len = std::nullopt},
       "settings.json: batching.block_tokens: must divide the trace's block size of 512 "
       "tokens (its block ids)",
       [](K& k) { k.block_tokens = 64; },
       512},
      // Block numbers, and their places in a replica's identity map, are 32-bit.
      {"more blocks than the block numbers count",
       {.kv_blocks = kMaxKvBlocks + 1, .max_model_len = std::nullopt},
       "settings.json: batching.kv_blocks: must be a whole number from 1 to 67108864, got "
       "67108865",
       [](K& k) { k.kv_blocks = kMaxKvBlocks; }},
      {"more experts a token than the model has",
       {.max_model_len = std::nullopt, .moe_experts = 8, .moe_active_experts = 9},
       "settings.json: batching.moe_experts, batching.moe_active_experts: a token goes to "
       "between 1 and moe_experts experts (0 and 0 for a dense model), not 9 of 8",
       [](K& k) { k.moe_active_experts = 8; }},
      {"an expert's read on a dense model",
       {.max_model_len = std::nullopt, .step_expert_s = 1e-4},
       "settings.json: batching.step_expert_s, batching.moe_experts: step_expert_s needs "
       "moe_experts: a dense model reads no expert",
       [](K& k) { k.step_expert_s = 0; }},
      {"a maximum power below the idle power",
       {.max_model_len = std::nullopt, .gpu_idle_w = 300, .gpu_max_w = 299.5},
       "settings.json: batching.gpu_max_w, batching.gpu_idle_w: gpu_max_w must not be below "
       "gpu_idle_w",
       [](K& k) { k.gpu_max_w = 300; }},
  };
  for (const Limit& limit : limits) {
    SCOPED_TRACE(limit.name);
    BatchingKnobs k = limit.past;
    EXPECT_EQ(error_of(k, limit.block_id_tokens), limit.message);
    limit.meet(k);
    EXPECT_NO_THROW(check(k, limit.block_id_tokens));
  }
}

TEST(BatchingKnobs, AnyBlockSizeServesATraceWithoutIds) {
  BatchingKnobs k;
  k.block_tokens = 48;
  k.kv_blocks = 20000;
  EXPECT_NO_THROW(check(k, 0));
}

// Replicas are numbered as blocks are, and a settings file gives at most a
// million: a struct built in code is held to the same row.
TEST(BatchingKnobs, MoreReplicasThanTheRowAllowsAreRefused) {
  BatchingKnobs k;
  k.replicas = 1'000'001;
  EXPECT_EQ(error_of(k),
            "settings.json: batching.replicas: must be a whole number from 1 to 1000000, got "
            "1000001");
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
    EXPECT_EQ(error_of(k).rfind(
                  std::string("settings.json: ") + name + ": must be a whole number from 1 to", 0),
              0u)
        << error_of(k);
  }
}

TEST(BatchingKnobs, NegativeCostsAndPowersAreRefused) {
  const std::pair<const char*, double BatchingKnobs::*> amounts[] = {
      {"step_base_s", &BatchingKnobs::step_base_s},
      {"step_prefill_token_s", &BatchingKnobs::step_prefill_token_s},
      {"step_prefill_pair_s", &BatchingKnobs::step_prefill_pair_s},
      {"step_decode_token_s", &BatchingKnobs::step_decode_token_s},
      {"step_decode_context_s", &BatchingKnobs::step_decode_context_s},
      {"step_weights_s", &BatchingKnobs::step_weights_s},
      {"gpu_idle_w", &BatchingKnobs::gpu_idle_w},
      {"gpu_max_w", &BatchingKnobs::gpu_max_w},
  };
  for (const auto& [name, member] : amounts) {
    BatchingKnobs k;
    k.*member = -1e-9;
    EXPECT_EQ(error_of(k), std::string("settings.json: batching.") + name +
                               ": must be at least 0.0, got -1e-09");
    k.*member = 0;
    if (std::string(name) != "gpu_max_w") {
      EXPECT_NO_THROW(check(k)) << name;
    }
  }
}

}  // namespace
}  // namespace infersim
