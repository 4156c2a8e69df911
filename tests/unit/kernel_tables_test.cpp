// The measured kernel tables (calibration/kernel_tables): reading them, the
// interpolation between measured shapes, the hold-out error, and every GPU
// folder of settings/kernels read whole.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "calibration/kernel_step_cost.hpp"
#include "calibration/kernel_tables.hpp"
#include "core/input_error.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

using ::testing::HasSubstr;

// A GEMM whose latency is a + b n + c k + d n k + e m, in microseconds.
double planted_gemm(double m, double n, double k) {
  return 3 + 0.01 * n + 0.02 * k + 1e-5 * n * k + 0.5 * m;
}

// A folder of tables small enough to check by hand: GEMMs over m 1, 8, 64
// at n and k of 256, 1024, 4096; one attention row a table; one all-reduce.
std::filesystem::path planted_tables() {
  const std::filesystem::path dir = test::fresh_dir();
  std::string gemm = "gemm_dtype,n,k,1,8,64\n";
  for (const double n : {256.0, 1024.0, 4096.0}) {
    for (const double k : {256.0, 1024.0, 4096.0}) {
      gemm += "bfloat16," + std::to_string(static_cast<int>(n)) + "," +
              std::to_string(static_cast<int>(k));
      for (const double m : {1.0, 8.0, 64.0})
        gemm += "," + std::to_string(planted_gemm(m, n, k));
      gemm += "\n";
    }
  }
  test::write_file(dir / "gemm.csv", gemm);
  const std::string attention =
      "kv_cache_dtype,head_dim,window_size,num_heads,num_key_value_heads,batch_size,16,64\n"
      "bfloat16,128,0,8,1,1,10,40\n"
      "bfloat16,128,0,8,1,4,40,160\n"
      "bfloat16,128,0,16,1,1,20,80\n"
      "bfloat16,128,0,16,1,4,80,320\n";
  test::write_file(dir / "context_attention.csv", attention);
  test::write_file(dir / "generation_attention.csv", attention);
  test::write_file(dir / "moe.csv",
                   "moe_dtype,distribution,hidden_size,inter_size,topk,num_experts,moe_tp_size,"
                   "moe_ep_size,1,16\nbfloat16,balanced,2048,768,8,128,1,1,30,60\n");
  test::write_file(dir / "allreduce.csv",
                   "backend,allreduce_dtype,num_gpus,1024,4096\n"
                   "vllm_graph,bfloat16,2,8,20\n");
  return dir;
}

TEST(KernelTables, GemmIsExactForALatencyBilinearInNAndK) {
  const KernelTables t = KernelTables::load(planted_tables().string());
  // Between measured n, k and m: linear in m, bilinear in n and k.
  for (const double m : {1.0, 8.0, 20.0, 64.0}) {
    for (const double n : {256.0, 700.0, 1024.0, 3000.0}) {
      for (const double k : {300.0, 1024.0, 2500.0})
        EXPECT_NEAR(t.gemm_us("bfloat16", m, n, k), planted_gemm(m, n, k), 1e-6) << m << n << k;
    }
  }
  // Beyond the largest m, n or k: in proportion to it.
  EXPECT_NEAR(t.gemm_us("bfloat16", 128, 1024, 1024), 2 * planted_gemm(64, 1024, 1024), 1e-6);
  EXPECT_NEAR(t.gemm_us("bfloat16", 8, 8192, 1024), 2 * planted_gemm(8, 4096, 1024), 1e-6);
  // Below the smallest m: the smallest's (a call takes no less for less).
  EXPECT_NEAR(t.gemm_us("bfloat16", 0.5, 1024, 1024), planted_gemm(1, 1024, 1024), 1e-6);
  EXPECT_THROW(t.gemm_us("fp8", 8, 1024, 1024), InputError);
}

TEST(KernelTables, AttentionInterpolatesHeadsBatchAndLength) {
  const KernelTables t = KernelTables::load(planted_tables().string());
  EXPECT_DOUBLE_EQ(t.context_attention_us("bfloat16", 128, 0, 8, 1, 1, 16), 10);
  // Halfway in heads, batch and length: each linear.
  EXPECT_DOUBLE_EQ(t.context_attention_us("bfloat16", 128, 0, 12, 1, 1, 16), 15);
  EXPECT_DOUBLE_EQ(t.context_attention_us("bfloat16", 128, 0, 8, 1, 2.5, 16), 25);
  EXPECT_DOUBLE_EQ(t.generation_attention_us("bfloat16", 128, 0, 8, 1, 1, 40), 25);
  // Twice the largest batch: twice its latency.
  EXPECT_DOUBLE_EQ(t.context_attention_us("bfloat16", 128, 0, 16, 1, 8, 64), 640);
  EXPECT_THROW(t.context_attention_us("fp8", 128, 0, 8, 1, 1, 16), InputError);
  EXPECT_DOUBLE_EQ(*t.allreduce_us(2, 2560), 14);
  EXPECT_FALSE(t.allreduce_us(8, 2560).has_value());
  EXPECT_DOUBLE_EQ(*t.moe_us("bfloat16", 2048, 768, 8, 128, 1, 1, 8.5), 45);
  EXPECT_FALSE(t.moe_us("bfloat16", 2048, 768, 8, 64, 1, 1, 8).has_value());
}

TEST(KernelTables, HoldingOutALinearTableGivesNoError) {
  const KernelTables t = KernelTables::load(planted_tables().string());
  bool gemm_m = false;
  for (const HoldOutError& e : hold_out_errors(t, 0)) {
    if (e.table == "gemm" && e.axis == "m") {
      gemm_m = true;
      EXPECT_EQ(e.points, 9u);  // m = 8 on each of the 9 rows
    }
    // n and k: the GEMM is linear in each alone; attention and the rest: the
    // planted rows are linear in every size.
    EXPECT_LT(e.p90_pct, 1e-9) << e.table << " " << e.axis;
  }
  EXPECT_TRUE(gemm_m);
}

TEST(KernelTables, MalformedTablesAreRefusedNamingLineAndColumn) {
  const std::filesystem::path dir = test::fresh_dir();
  const auto refused = [&](const std::string& text) {
    test::write_file(dir / "t.csv", text);
    try {
      KernelTable::read((dir / "t.csv").string(), 3, "m");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(refused("gemm_dtype,n,k,1,8\nbfloat16,64,64,2,x\n"),
              HasSubstr("t.csv:2: 8: expected a latency in microseconds above 0, got 'x'"));
  EXPECT_THAT(refused("gemm_dtype,n,k,8,1\n"),
              HasSubstr("t.csv:1: 1: a size column's header is an increasing number"));
  EXPECT_THAT(refused("gemm_dtype,n,k,1,8\nbfloat16,64,64,2\n"),
              HasSubstr("t.csv:2: 4 cells, the header has 5"));
  EXPECT_THAT(refused("gemm_dtype,n,k,1,8\nbfloat16,64,64,,\n"),
              HasSubstr("t.csv:2: no measured latency"));
  EXPECT_THAT(refused("gemm_dtype,n,k,1\nbfloat16,64,64,2\nbfloat16,64,64,3\n"),
              HasSubstr("t.csv:3: the same shape twice"));
}

// Every GPU's folder reads whole, and its GEMMs interpolate within a few
// percent (median) when each measured point is held out.
TEST(KernelTables, EveryGpuOfTheTreeReadsAndInterpolates) {
  const std::filesystem::path root =
      std::filesystem::path(INFERSIM_SOURCE_DIR) / "settings" / "kernels";
  std::size_t gpus = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!entry.is_directory() || !std::filesystem::exists(entry.path() / "gemm.csv")) continue;
    ++gpus;
    const KernelTables t = KernelTables::load(entry.path().string());
    EXPECT_GT(t.gemm_us("bfloat16", 512, 8192, 8192), t.gemm_us("bfloat16", 1, 8192, 8192));
    for (const HoldOutError& e : hold_out_errors(t)) {
      if (e.table == "gemm") {
        EXPECT_LT(e.median_pct, 10) << entry.path() << " " << e.axis;
      }
    }
  }
  EXPECT_EQ(gpus, 6u);
}

// A model small enough for the planted tables: every GEMM's n and k within
// them, 8 query heads and one KV head.
ModelSpec planted_model() {
  ModelSpec m;
  m.name = "planted";
  m.layers = 2;
  m.hidden = 1024;
  m.intermediate = 2048;
  m.heads = 8;
  m.kv_heads = 1;
  m.head_dim = 128;
  m.vocab = 4096;
  return m;
}

// A GPU moving 10^12 bytes a second: a token's element-wise bytes a layer
// take as many picoseconds.
GpuSpec planted_gpu() {
  GpuSpec g;
  g.name = "planted";
  g.bandwidth_bps = 1e12;
  return g;
}

TEST(KernelStepCost, ATablesTokensAreEachLayersGemmsAndTheLmHeadAtOneSequence) {
  const KernelTables t = KernelTables::load(planted_tables().string());
  const StepTable table =
      compose_step_table(t, planted_gpu(), planted_model(), Deployment{}, "bfloat16");
  // Element-wise, BF16: 8 hidden of norms and residuals, q and k rotated
  // (1024 + 128, read and written), gate, up and product (3 x 2048), k and
  // v cached (4 x 128): 17152 elements.
  EXPECT_EQ(elementwise_bytes_per_token(planted_model(), Deployment{}), 2 * 17152);
  ASSERT_EQ(table.tokens.at, (std::vector<double>{1, 8, 64}));
  for (std::size_t i = 0; i < 3; ++i) {
    const double m = table.tokens.at[i];
    // q, k, v (8 + 2 heads of 128) and o; the MLP's gate and up, and down.
    const double layer = planted_gemm(m, 1280, 1024) + planted_gemm(m, 1024, 1024) +
                         planted_gemm(m, 4096, 1024) + planted_gemm(m, 1024, 2048) +
                         m * 2 * 17152 * 1e-6;
    EXPECT_NEAR(table.tokens.s[i], (2 * layer + planted_gemm(1, 4096, 1024)) * 1e-6, 1e-12);
  }
  EXPECT_TRUE(table.expert_tokens.empty());
  // A prompt of s tokens is s (s + 1) / 2 pairs; every layer's attention.
  EXPECT_EQ(table.prefill_pairs.at, (std::vector<double>{136, 2080}));
  EXPECT_NEAR(table.prefill_pairs.s[1], 2 * 40e-6, 1e-15);
  // Decodes: every layer's attention, and the LM head past one sequence.
  EXPECT_EQ(table.decode.batch, (std::vector<double>{1, 4}));
  EXPECT_NEAR(table.decode.value(1, 16), 2 * 10e-6, 1e-15);
  EXPECT_NEAR(table.decode.value(4, 64),
              (2 * 160 + planted_gemm(4, 4096, 1024) - planted_gemm(1, 4096, 1024)) * 1e-6, 1e-12);
}

TEST(KernelStepCost, TensorParallelismSplitsTheShapesAndAddsTwoAllReducesALayer) {
  const KernelTables t = KernelTables::load(planted_tables().string());
  Deployment d;
  d.tensor_parallel = 2;
  const StepTable table = compose_step_table(t, planted_gpu(), planted_model(), d, "bfloat16");
  // m = 1: 1024 elements reduced, 8 us each; q and o of 4 heads, the MLP
  // halved, the LM head's vocabulary halved; the element-wise kernels over
  // 4 query heads, 1 KV head and half the MLP: 13056 elements.
  EXPECT_EQ(elementwise_bytes_per_token(planted_model(), d), 2 * 13056);
  const double layer = planted_gemm(1, 768, 1024) + planted_gemm(1, 1024, 512) +
                       planted_gemm(1, 2048, 1024) + planted_gemm(1, 1024, 1024) + 2 * 8 +
                       2 * 13056 * 1e-6;
  EXPECT_NEAR(table.tokens.s[0], (2 * layer + planted_gemm(1, 2048, 1024)) * 1e-6, 1e-12);
  d.tensor_parallel = 4;
  try {
    compose_step_table(t, planted_gpu(), planted_model(), d, "bfloat16");
    ADD_FAILURE() << "composed";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("allreduce.csv: num_gpus: no all-reduce measured over 4 GPUs"));
  }
}

TEST(KernelStepCost, AnExpertModelsLayerComesFromTheMoeTableOrIsRefused) {
  const KernelTables t = KernelTables::load(planted_tables().string());
  ModelSpec m = planted_model();
  m.hidden = 2048;
  m.experts = 128;
  m.active_experts = 8;
  m.moe_intermediate = 768;
  m.heads = 16;
  const StepTable table = compose_step_table(t, planted_gpu(), m, Deployment{}, "bfloat16");
  EXPECT_EQ(table.expert_tokens.at, (std::vector<double>{1, 16}));
  EXPECT_NEAR(table.expert_tokens.s[1], 2 * 60e-6, 1e-15);
  m.active_experts = 4;
  EXPECT_THROW(compose_step_table(t, planted_gpu(), m, Deployment{}, "bfloat16"), InputError);
}

// The H100 block of settings/kernels/README.md is what `presets kernels
// --gpu h100` prints, line for line.
TEST(KernelTables, TheReadmesH100BlockIsWhatTheCommandPrints) {
  std::ifstream in(test::source_dir() / "settings" / "kernels" / "README.md");
  std::string line, block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "```") {
      if (inside) break;
      inside = true;
      continue;
    }
    if (inside) block += line + "\n";
  }
  ASSERT_THAT(block, HasSubstr("h100          gemm"));
  const auto printed = test::run_cli({"presets", "kernels", "--gpu", "h100"});
  ASSERT_EQ(printed.status, 0) << printed.err;
  EXPECT_THAT(printed.out, HasSubstr(block));
}

}  // namespace
}  // namespace infersim
