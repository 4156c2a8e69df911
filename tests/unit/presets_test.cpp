// The model presets of settings/presets/ (its README.md shows the derivation):
// every file loads through the settings reader as a batching server, and its
// KV blocks, step costs, limits and powers are worked out again here from the
// hardware and model figures the README cites, so a file edited by hand or
// derived by a wrong formula fails; each preset then serves a small trace
// with its first token after exactly its prefill step.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"
#include "scenario/settings.hpp"
#include "test_support.hpp"
#include "trace/azure_csv_reader.hpp"

namespace infersim {
namespace {

namespace fs = std::filesystem;

// Vendor datasheet figures (README: "GPUs"). Memory as GiB, bandwidth in
// bytes/s, dense BF16 tensor FLOP/s (no sparsity), TDP in W.
struct Gpu {
  const char* name;
  double memory_gib;
  double bandwidth_bps;
  double bf16_flops;
  double tdp_w;
  bool nvlink;  // tensor parallelism over NVLink (else over PCIe)
};

constexpr Gpu kGpus[] = {
    {"h100", 80, 3.35e12, 989.5e12, 700, true},
    {"h200", 141, 4.8e12, 989.5e12, 700, true},
    {"a100-80gb", 80, 2.039e12, 312e12, 400, true},
    {"l40s", 48, 864e9, 362.05e12, 350, false},
    {"rtx-4090", 24, 1008e9, 165.2e12, 450, false},
    {"rtx-pro-6000", 96, 1792e9, 503.8e12, 600, false},
};

// The models' published config.json (README: "Models") and their model cards'
// parameter counts.
struct Model {
  const char* name;
  std::int64_t layers;
  std::int64_t hidden;
  std::int64_t intermediate;
  std::int64_t heads;
  std::int64_t kv_heads;
  std::int64_t head_dim;
  std::int64_t vocab;
  std::int64_t max_position;
  bool qk_norm;  // Qwen3 normalises q and k per head (two head_dim weights a layer)
  double card_params;
};

constexpr Model kModels[] = {
    {"llama-3.1-8b", 32, 4096, 14336, 32, 8, 128, 128256, 131072, false, 8.03e9},
    {"llama-3.1-70b", 80, 8192, 28672, 64, 8, 128, 128256, 131072, false, 70.6e9},
    {"qwen3-32b", 64, 5120, 25600, 64, 8, 128, 151936, 40960, true, 32.8e9},
};

// The stated assumptions (README: "Assumptions").
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMemoryUtilization = 0.9;  // vLLM's gpu_memory_utilization
constexpr double kReserveBytes = 2 * kGiB;  // activations, CUDA graphs, workspaces, a GPU
constexpr double kComputeEfficiency = 0.5;
constexpr double kBandwidthEfficiency = 0.7;
constexpr double kNvlinkTpEfficiency = 0.9;
constexpr double kPcieTpEfficiency = 0.75;
constexpr double kIdleFractionOfTdp = 0.15;
constexpr std::int64_t kBlockTokens = 16;
constexpr std::int64_t kLeastKvTokens = 32768;

// Parameters from the config: embeddings and an untied LM head (vocab x
// hidden each), per layer the q, k, v, o projections, the gated MLP's three
// matrices and the norms, and the final norm.
double params_of(const Model& m) {
  const std::int64_t q = m.heads * m.head_dim;
  const std::int64_t kv = m.kv_heads * m.head_dim;
  const std::int64_t layer = m.hidden * q + 2 * m.hidden * kv + q * m.hidden +
                             3 * m.hidden * m.intermediate + 2 * m.hidden +
                             (m.qk_norm ? 2 * m.head_dim : 0);
  return static_cast<double>(m.layers * layer + 2 * m.vocab * m.hidden + m.hidden);
}

struct Expected {
  std::string name;
  std::int64_t tp = 0;
  std::int64_t kv_blocks = 0;
  std::int64_t max_model_len = 0;
  std::int64_t max_num_seqs = 0;
  std::int64_t max_num_batched_tokens = 0;
  double c0 = 0, cp = 0, cq = 0, cd = 0, ckv = 0;
  double idle_w = 0, max_w = 0;
};

Expected derive(const Gpu& g, const Model& m) {
  Expected e;
  e.name = std::string(g.name) + "-" + m.name;
  const double params = params_of(m);
  const double embedding = static_cast<double>(m.vocab * m.hidden);
  const double weight_bytes = 2 * params;
  const double kv_bytes_a_token = 2.0 * static_cast<double>(m.layers * m.kv_heads * m.head_dim) * 2;
  // The smallest tensor parallelism whose KV cache holds 32768 tokens.
  for (e.tp = 1; e.tp <= 8; e.tp *= 2) {
    const double tp = static_cast<double>(e.tp);
    const double kv_bytes =
        tp * (g.memory_gib * kGiB * kMemoryUtilization - kReserveBytes) - weight_bytes;
    e.kv_blocks =
        static_cast<std::int64_t>(std::floor(kv_bytes / (kv_bytes_a_token * kBlockTokens))) - 1;
    if (e.kv_blocks * kBlockTokens >= kLeastKvTokens) break;
  }
  const double tp = static_cast<double>(e.tp);
  const double tp_efficiency = e.tp == 1 ? 1 : g.nvlink ? kNvlinkTpEfficiency : kPcieTpEfficiency;
  const double flops = tp * g.bf16_flops * kComputeEfficiency * tp_efficiency;
  const double bandwidth = tp * g.bandwidth_bps * kBandwidthEfficiency * tp_efficiency;
  e.c0 = weight_bytes / bandwidth;              // the weights read once a step
  e.cp = 2 * (params - 2 * embedding) / flops;  // no lookup, no LM head
  e.cq = 4.0 * static_cast<double>(m.layers * m.heads * m.head_dim) / flops;  // QK and PV
  e.cd = 2 * (params - embedding) / flops;  // the LM head on every decode
  e.ckv = kv_bytes_a_token / bandwidth;     // a context token's K and V read
  e.max_model_len = std::min(m.max_position, e.kv_blocks * kBlockTokens);
  // vLLM's defaults for its API server: the larger ones on a GPU of 70 GiB or
  // more that is not an A100.
  const bool large = g.memory_gib >= 70 && std::string(g.name).rfind("a100", 0) != 0;
  e.max_num_seqs = large ? 1024 : 256;
  e.max_num_batched_tokens = large ? 8192 : 2048;
  e.idle_w = tp * g.tdp_w * kIdleFractionOfTdp;
  e.max_w = tp * g.tdp_w;
  return e;
}

std::vector<Expected> every_preset() {
  std::vector<Expected> all;
  for (const Gpu& g : kGpus) {
    for (const Model& m : kModels)
      all.push_back(derive(g, m));
  }
  return all;
}

fs::path preset_path(const std::string& name) {
  return test::source_dir() / "settings" / "presets" / (name + ".json");
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// A preset whose step costs were fitted from a measured run instead of
// derived (README: "Fitted presets replace roofline ones").
bool fitted(const std::string& name) {
  return read_json(preset_path(name)).at("meta").at("step_costs") == "fitted";
}

// The files hold four significant digits.
void expect_rounded(double file, double derived, const std::string& what) {
  EXPECT_NEAR(file, derived, 6e-4 * derived) << what;
}

TEST(Presets, ParameterCountsFromTheConfigsAreTheModelCards) {
  // A mistyped config figure moves the count by far more than the cards'
  // rounding to three digits.
  EXPECT_EQ(params_of(kModels[0]), 8'030'261'248.0);  // Llama-3.1-8B's safetensors total
  for (const Model& m : kModels) {
    EXPECT_NEAR(params_of(m), m.card_params, 0.005 * m.card_params) << m.name;
  }
}

TEST(Presets, TheFolderHoldsOneFileForEachGpuAndModel) {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "settings" / "presets")) {
    if (entry.path().extension() == ".json") found.insert(entry.path().stem().string());
  }
  std::set<std::string> wanted;
  for (const Expected& e : every_preset())
    wanted.insert(e.name);
  EXPECT_EQ(found, wanted);
  EXPECT_EQ(wanted.size(), 18u);
}

TEST(Presets, EveryFileLoadsThroughTheSettingsReaderAsABatchingServer) {
  for (const Expected& e : every_preset()) {
    SCOPED_TRACE(e.name);
    Settings s;
    ASSERT_NO_THROW(apply_settings_file(s, preset_path(e.name).string()));
    EXPECT_EQ(s.server_kind, "batching");
    const BatchingKnobs& b = s.batching;
    ASSERT_TRUE(b.max_model_len.has_value());
    EXPECT_LE(*b.max_model_len, b.kv_blocks * b.block_tokens);
    EXPECT_LE(b.max_num_seqs, b.max_num_batched_tokens);
    // The file names itself and its tensor parallelism in `meta`, which the
    // reader skips.
    const nlohmann::json meta = read_json(preset_path(e.name)).at("meta");
    EXPECT_EQ(meta.at("preset"), e.name);
    if (fitted(e.name)) {
      // A fitted file names the measured run and its own tensor parallelism.
      EXPECT_FALSE(meta.at("fitted_on").get<std::string>().empty());
      EXPECT_GE(meta.at("tensor_parallel").get<int>(), 1);
    } else {
      EXPECT_EQ(meta.at("step_costs"), "roofline");
      EXPECT_EQ(meta.at("tensor_parallel"), e.tp);
    }
  }
}

TEST(Presets, EveryFileIsItsDerivationFromTheCitedFigures) {
  std::size_t derived = 0;
  for (const Expected& e : every_preset()) {
    SCOPED_TRACE(e.name);
    if (fitted(e.name)) continue;
    ++derived;
    Settings s;
    apply_settings_file(s, preset_path(e.name).string());
    const BatchingKnobs& b = s.batching;
    EXPECT_EQ(b.block_tokens, kBlockTokens);
    EXPECT_EQ(b.kv_blocks, e.kv_blocks);
    ASSERT_TRUE(b.max_model_len.has_value());
    EXPECT_EQ(*b.max_model_len, e.max_model_len);
    EXPECT_EQ(b.max_num_seqs, e.max_num_seqs);
    EXPECT_EQ(b.max_num_batched_tokens, e.max_num_batched_tokens);
    expect_rounded(b.step_base_s, e.c0, "step_base_s");
    expect_rounded(b.step_prefill_token_s, e.cp, "step_prefill_token_s");
    expect_rounded(b.step_prefill_pair_s, e.cq, "step_prefill_pair_s");
    expect_rounded(b.step_decode_token_s, e.cd, "step_decode_token_s");
    expect_rounded(b.step_decode_context_s, e.ckv, "step_decode_context_s");
    EXPECT_DOUBLE_EQ(b.gpu_idle_w, e.idle_w);
    EXPECT_DOUBLE_EQ(b.gpu_max_w, e.max_w);
  }
  // Marking a file fitted skips this check: only the pairs with a measured
  // run (two today) may be.
  EXPECT_GE(derived, 16u);
}

TEST(Presets, SeventyBillionNeedsTensorParallelismAndTheRestFitWhereMemoryAllows) {
  // 141 GB of bf16 weights exceed every single GPU's 90 %, so 70B is always
  // split; Qwen3-32B's 65.5 GB cannot sit on 24 or 48 GB.
  for (const Expected& e : every_preset()) {
    if (e.name.find("70b") != std::string::npos) {
      EXPECT_GE(e.tp, 2) << e.name;
    }
    if (e.name.find("8b") != std::string::npos) {
      EXPECT_EQ(e.tp, 1) << e.name;
    }
  }
  EXPECT_EQ(derive(kGpus[3], kModels[2]).tp, 2);  // L40S, Qwen3-32B
  EXPECT_EQ(derive(kGpus[4], kModels[2]).tp, 4);  // RTX 4090, Qwen3-32B
  EXPECT_EQ(derive(kGpus[4], kModels[1]).tp, 8);  // RTX 4090, Llama-3.1-70B
}

TEST(Presets, EveryPresetServesASmallTraceWithItsPrefillStepAsTheFirstToken) {
  const Trace trace =
      read_azure_csv(test::temp_file("two_bursts", test::kTwoBurstsTrace, ".csv").string());
  ASSERT_EQ(trace.records.size(), 8u);
  for (const Expected& e : every_preset()) {
    SCOPED_TRACE(e.name);
    Settings s;
    apply_settings_file(s, preset_path(e.name).string());
    s.hops = {};  // an instant network: TTFT is the server's alone
    const ModeResult r = test::run_recorded(s, trace, true);
    ASSERT_EQ(r.log.size(), 8u);
    for (std::size_t k = 0; k < r.log.size(); ++k) {
      ASSERT_FALSE(r.log[k].rejected) << k;
      const double ttft_s = (r.log[k].first_token - r.tasks.arrival(k)).seconds();
      EXPECT_TRUE(std::isfinite(ttft_s) && ttft_s > 0) << k;
      EXPECT_LT(ttft_s, 10) << k;
    }
    // The last request (1200 prompt tokens at 59 s) finds the replica idle:
    // one prefill step, P = 1200 and Q = 1200 * 1201 / 2 (BATCHING.md
    // section 5), summed in the spec's order.
    const BatchingKnobs& b = s.batching;
    const double step_s = b.step_base_s + b.step_prefill_token_s * 1200 +
                          b.step_prefill_pair_s * (1200.0 * 1201 / 2) + b.step_decode_token_s * 0 +
                          b.step_decode_context_s * 0;
    EXPECT_EQ((r.log[7].first_token - r.tasks.arrival(7)).count_ns(), std::llround(step_s * 1e9));
  }
}

}  // namespace
}  // namespace infersim
