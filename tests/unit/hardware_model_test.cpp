// The hardware model (calibration/hardware_model.hpp): the models' parameter
// counts against their model cards, a cost map and a KV count worked out by
// hand, the catalog's files read and refused, and the efficiency factors
// fitted back from runs simulated with known ones.
#include "calibration/hardware_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "calibration/batching_calibration.hpp"
#include "calibration/hardware_runs.hpp"
#include "calibration/measured_replay.hpp"
#include "calibration/measured_run_reader.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

HardwareCatalog shipped() {
  return load_hardware((test::source_dir() / "settings" / "hardware").string());
}

TEST(HardwareModel, ParameterCountsAreTheModelCards) {
  const HardwareCatalog c = shipped();
  // Llama-3.1-8B's safetensors hold exactly this many.
  EXPECT_EQ(c.model("llama-3.1-8b", "").params(), 8'030'261'248.0);
  EXPECT_NEAR(c.model("llama-3.1-70b", "").params(), 70.6e9, 0.005 * 70.6e9);
  EXPECT_NEAR(c.model("qwen3-32b", "").params(), 32.8e9, 0.005 * 32.8e9);
  // "30.5B in total and 3.3B activated".
  const ModelSpec& moe = c.model("qwen3-30b-a3b", "");
  EXPECT_NEAR(moe.params(), 30.5e9, 0.005 * 30.5e9);
  EXPECT_NEAR(moe.active_params(), 3.3e9, 0.02 * 3.3e9);
  EXPECT_EQ(c.model("llama-3.1-8b", "").kv_bytes_per_token(), 131072.0);
  EXPECT_EQ(moe.kv_bytes_per_token(), 2.0 * 48 * 4 * 128 * 2);
}

// H100 x Llama-3.1-8B at every share 1 and no overhead, by hand: N =
// 8,030,261,248, the embedding E = 128256 x 4096 = 525,336,576.
TEST(HardwareModel, TheCostMapIsBytesOverBandwidthAndFlopsOverFlops) {
  const HardwareCatalog c = shipped();
  const GpuSpec& h100 = c.gpu("h100", "");
  const ModelSpec& llama = c.model("llama-3.1-8b", "");
  const CostMap m = cost_map(h100, llama, Deployment{});
  const Efficiency ideal{0, 1, 1, 1, 1, 1};
  const StepCoefficients k = m.at(to_vector(ideal));
  const double e = 525'336'576, n = 8'030'261'248;
  EXPECT_DOUBLE_EQ(k[kStepBase], 0);
  // Every weight but the embedding table, once a step.
  EXPECT_DOUBLE_EQ(k[kStepWeights], 2 * (n - e) / 3.35e12);
  // A prefill token skips the lookup and the head; a decode runs the head.
  EXPECT_DOUBLE_EQ(k[kStepPrefillToken], 2 * (n - 2 * e) / 989.5e12);
  EXPECT_DOUBLE_EQ(k[kStepDecodeToken], 2 * (n - e) / 989.5e12);
  EXPECT_DOUBLE_EQ(k[kStepPrefillPair], 4.0 * 32 * 32 * 128 / 989.5e12);
  EXPECT_DOUBLE_EQ(k[kStepDecodeContext], 131072 / 3.35e12);
  EXPECT_EQ(k[kStepExpert], 0);
  // A share of a roof is a factor on its terms; the overhead is c0.
  const StepCoefficients half = m.at(to_vector({0.004, 0.5, 1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(half[kStepWeights], 2 * k[kStepWeights]);
  EXPECT_DOUBLE_EQ(half[kStepBase], 0.004);
  EXPECT_DOUBLE_EQ(half[kStepPrefillToken], k[kStepPrefillToken]);
}

TEST(HardwareModel, CollectivesCostOnlyAcrossGpus) {
  const HardwareCatalog c = shipped();
  const GpuSpec& gpu = c.gpu("rtx-pro-6000", "");
  const ModelSpec& qwen = c.model("qwen3-32b", "");
  const Efficiency ideal{0, 1, 1, 1, 1, 1};
  const StepCoefficients one = cost_map(gpu, qwen, Deployment{}).at(to_vector(ideal));
  Deployment two;
  two.tensor_parallel = 2;
  const CostMap m2 = cost_map(gpu, qwen, two);
  const StepCoefficients tp2 = m2.at(to_vector(ideal));
  // Two GPUs read and compute half each...
  EXPECT_DOUBLE_EQ(tp2[kStepWeights], one[kStepWeights] / 2);
  // ...and two all-reduces a layer cross the link: a latency each a step,
  // and 2 (TP - 1) / TP of a token's hidden state each a token.
  EXPECT_DOUBLE_EQ(tp2[kStepBase], 2 * 64 * gpu.link_latency_s);
  const double bytes = 2 * 64 * 2 * 0.5 * 5120 * 2;
  EXPECT_DOUBLE_EQ(tp2[kStepPrefillToken], one[kStepPrefillToken] / 2 + bytes / gpu.link_bps);
  EXPECT_EQ(one[kStepBase], 0);
  // The link's share scales the collectives alone.
  const StepCoefficients slow = m2.at(to_vector({0, 1, 1, 1, 1, 0.5}));
  EXPECT_DOUBLE_EQ(slow[kStepBase], 2 * tp2[kStepBase]);
  EXPECT_DOUBLE_EQ(slow[kStepWeights], tp2[kStepWeights]);
}

// vLLM's accounting by hand for one RTX 4090 and Llama-3.1-8B with its
// default limits (256 sequences, 2048 tokens): 0.9 of the memory, less the
// weights (2 N bytes) and the reserve, over 16 tokens x 128 KiB; one block
// fewer usable.
TEST(HardwareModel, KvBlocksFollowVllmsAccounting) {
  const HardwareCatalog c = shipped();
  const GpuSpec& gpu = c.gpu("rtx-4090", "");
  const ModelSpec& llama = c.model("llama-3.1-8b", "");
  Deployment d;
  fill_engine_defaults(gpu, d);
  EXPECT_EQ(d.max_num_seqs, 256);
  EXPECT_EQ(d.max_num_batched_tokens, 2048);
  const MemoryReserve r = memory_reserve(llama, d);
  const double available = 0.9 * gpu.memory_bytes - 2 * 8'030'261'248.0 - r.total();
  EXPECT_EQ(kv_blocks_of(gpu, llama, d),
            static_cast<std::int64_t>(std::floor(available / (16 * 131072.0))) - 1);
  // Twice the GPUs: each holds half the weights and half of each block.
  Deployment two = d;
  two.tensor_parallel = 2;
  const double each = 0.9 * gpu.memory_bytes - 8'030'261'248.0 - memory_reserve(llama, two).total();
  EXPECT_EQ(kv_blocks_of(gpu, llama, two),
            static_cast<std::int64_t>(std::floor(each / (16 * 65536.0))) - 1);
}

TEST(HardwareModel, DerivedKnobsAreAReplicaOfTheDeployment) {
  const HardwareCatalog c = shipped();
  const GpuSpec& gpu = c.gpu("rtx-pro-6000", "");
  Deployment d;
  d.data_parallel = 2;
  const BatchingKnobs moe = derive_knobs(gpu, c.model("qwen3-30b-a3b", ""), d, c.efficiency);
  EXPECT_EQ(moe.replicas, 2);
  EXPECT_TRUE(moe.lockstep);
  EXPECT_EQ(moe.moe_experts, 128);
  EXPECT_EQ(moe.moe_active_experts, 8);
  EXPECT_GT(moe.step_expert_s, 0);
  EXPECT_EQ(moe.max_num_seqs, 1024);  // 96 GB, not an A100
  EXPECT_EQ(moe.gpu_max_w, 600);
  EXPECT_EQ(moe.gpu_idle_w, 90);
  EXPECT_LE(moe.model_len(), moe.kv_blocks * moe.block_tokens);
  EXPECT_NO_THROW(check_batching_knobs(moe, 0, "derived"));
  // 141 GB of weights do not fit on one 24 GB card.
  EXPECT_THAT(test::error_of([&] {
                derive_knobs(c.gpu("rtx-4090", ""), c.model("llama-3.1-70b", ""), Deployment{},
                             c.efficiency);
              }),
              HasSubstr("no memory is left for its KV cache"));
}

TEST(HardwareModel, DevicesAndModelIdsAreRecognised) {
  const HardwareCatalog c = shipped();
  ASSERT_NE(c.gpu_by_device("NVIDIA GeForce RTX 4090"), nullptr);
  EXPECT_EQ(c.gpu_by_device("NVIDIA GeForce RTX 4090")->name, "rtx-4090");
  EXPECT_EQ(c.gpu_by_device("NVIDIA H100 80GB HBM3"), nullptr);  // "H100 SXM5" is its title
  ASSERT_NE(c.model_by_id("meta-llama/llama-3.1-8b"), nullptr);
  EXPECT_EQ(c.model_by_id("meta-llama/llama-3.1-8b")->name, "llama-3.1-8b");
  EXPECT_EQ(c.model_by_id("mistralai/Mistral-7B"), nullptr);
  EXPECT_THAT(test::error_of([&] { c.gpu("b300", "--gpu"); }),
              HasSubstr("--gpu: gpu: unknown GPU 'b300' (known: a100-80gb, b200, h100"));
}

// A catalog folder with one file changed from the shipped one.
fs::path catalog_with(const std::string& file, const std::string& text) {
  const fs::path dir = test::fresh_dir("catalog");
  for (const char* name : {"gpus.json", "models.json", "efficiency.json"}) {
    fs::copy_file(test::source_dir() / "settings" / "hardware" / name, dir / name);
  }
  test::write_file(dir / file, text);
  return dir;
}

TEST(HardwareModel, BadCatalogFilesAreRefusedNamingFileAndKey) {
  const struct {
    const char* file;
    const char* text;
    const char* error;
  } cases[] = {
      {"gpus.json", R"({"gpus": {"x": {"title": "X", "memory_gib": 24}}})",
       "gpus.json: gpus.x.bandwidth_gb_s: missing"},
      {"gpus.json",
       R"({"gpus": {"x": {"title": "X", "memory_gib": 24, "bandwidth_gb_s": 1, "bf16_tflops": 1,
          "tdp_w": 1, "link_gb_s": 1, "link_latency_s": 0, "source": "s", "colour": 1}}})",
       "gpus.json: gpus.x.colour: unknown key"},
      {"gpus.json",
       R"({"gpus": {"x": {"title": "X", "memory_gib": -24, "bandwidth_gb_s": 1, "bf16_tflops": 1,
          "tdp_w": 1, "link_gb_s": 1, "link_latency_s": 0, "source": "s"}}})",
       "gpus.json: gpus.x.memory_gib: must be at least 1, not -24"},
      {"models.json",
       R"({"models": {"m": {"hf_id": "a/b", "num_hidden_layers": "many", "hidden_size": 1}}})",
       "models.json: models.m.num_hidden_layers: expected a whole number, got \"many\""},
      {"efficiency.json", R"({"form": "sum", "factors": {"overhead_s": 0}})",
       "efficiency.json: factors.weights: missing"},
      {"efficiency.json", "{\"form\": \"max\", \"factors\": {}}",
       "efficiency.json: form: expected \"sum\" or \"roofline\""},
      {"gpus.json", "{not json", "gpus.json: not valid JSON"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    const fs::path dir = catalog_with(c.file, c.text);
    EXPECT_THAT(test::error_of([&] { load_hardware(dir.string()); }), HasSubstr(c.error));
  }
}

// Two runs simulated with known factors on two GPUs (the Qwen3-32B run's
// arrivals and sizes replayed at TP 2 on an RTX PRO 6000 and at TP 1 on an
// H200) and written back as their measured figures: the factors shared by
// both come back.
TEST(HardwareModel, FactorsFittedAcrossRunsAreTheOnesThatMadeThem) {
  const HardwareCatalog c = shipped();
  const Efficiency truth{0.002, 0.6, 0.8, 0.55, 0.3, 0.4};
  std::vector<HardwareRunSource> runs;
  for (const auto& [gpu, tp] : {std::pair<std::string, std::int64_t>{"rtx-pro-6000", 2},
                                std::pair<std::string, std::int64_t>{"h200", 1}}) {
    HardwareRunSource run = load_hardware_run(test::measured_path("RTXPRO6000-Qwen3-32B"), c,
                                              "rtx-pro-6000", std::nullopt, false);
    run.gpu = c.gpu(gpu, "");
    run.deployment.tensor_parallel = tp;
    run.map = cost_map(run.gpu, run.model, run.deployment);
    run.knobs.kv_blocks = 20000;
    BatchingKnobs made = run.knobs;
    set_coefficients(made, run.map.at(to_vector(truth)));
    const Replay replay = replay_measured(run.source.replay, made);
    // The replay's own figures as what was measured.
    MeasuredReplay& m = run.source.replay;
    double ttft_sum = 0;
    for (std::size_t k = 0; k < m.measured.size(); ++k) {
      const RequestOutcome r = replay.requests[k];
      const double arrival = SimTime::ns(m.trace.records[k].offset_ns).seconds();
      MeasuredFigures& f = m.measured[k];
      f.ttft_s = r.first_token_server.seconds() - arrival;
      f.latency_s = r.finish.seconds() - arrival;
      f.tpot_s.reset();
      if (f.output_tokens >= 2) {
        f.tpot_s = (r.finish - r.first_token_server).seconds() / (f.output_tokens - 1);
      }
      ttft_sum += f.ttft_s;
    }
    m.ttft_scale_s = ttft_sum / static_cast<double>(m.measured.size());
    runs.push_back(std::move(run));
  }
  const EfficiencyFit fit = fit_efficiency(hardware_runs(runs));
  EXPECT_LT(fit.losses[0].total + fit.losses[1].total, 1e-6);
  EXPECT_NEAR(fit.factors.overhead_s, truth.overhead_s, 0.03 * truth.overhead_s);
  EXPECT_NEAR(fit.factors.weights, truth.weights, 0.03 * truth.weights);
  EXPECT_NEAR(fit.factors.kv, truth.kv, 0.03 * truth.kv);
  EXPECT_NEAR(fit.factors.compute, truth.compute, 0.03 * truth.compute);
  EXPECT_NEAR(fit.factors.link, truth.link, 0.03 * truth.link);
}

}  // namespace
}  // namespace infersim
