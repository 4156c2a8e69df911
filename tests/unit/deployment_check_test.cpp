// The measured deployments predicted row by row (calibration/deployment_check,
// `infersim presets deployments`): which rows are covered and why the others
// are not, each prediction the run a user would make of the same preset and
// load, and the refusals of a malformed file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "calibration/deployment_check.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

using ::testing::HasSubstr;

constexpr const char* kDeploymentHeader =
    "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,"
    "gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,silicon_ttft_ms,"
    "silicon_tpot_ms\n";

TEST(DeploymentCheck, PredictsTheCoveredRowsAsARunOfTheirPresetWould) {
  const std::filesystem::path dir = test::fresh_dir();
  const std::string csv =
      std::string(kDeploymentHeader) +
      "a,x; silicon_concurrency=4,vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,256,16,,,4,2,1,,"
      "100,20\n"
      "b,x; silicon_concurrency=4,vllm,0.19.0,meta-llama/Llama-3.1-70B,h100_sxm,fp4,agg,256,16,"
      "nvfp4,nvfp4,4,4,1,1,100,20\n"
      "e,x; silicon_concurrency=4,vllm,0.19.0,nvidia/Llama-3.1-8B-Instruct-FP8,a100_sxm,fp8,agg,"
      "256,16,fp8,fp8,4,1,1,1,100,20\n"
      "f,x; silicon_concurrency=2,vllm,0.19.0,nvidia/Llama-3.1-8B-Instruct-FP8,h200_sxm,fp8,agg,"
      "256,16,fp8,fp8,2,1,1,1,100,20\n"
      "c,x; silicon_concurrency=4,vllm,0.19.0,meta-llama/Llama-3.1-70B,b300_sxm,,agg,256,16,,,4,"
      "4,1,1,100,20\n"
      "d,x,vllm,0.19.0,Qwen/Qwen3-32B,h100_sxm,,disagg,256,16,,,,,,,100,20\n";
  const std::filesystem::path rows = test::write_file(dir / "deployments.csv", csv);
  const test::CliResult r = test::run_cli({"presets", "deployments", "--deployments", rows.string(),
                                           "--write", (dir / "predicted.csv").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("6 rows read, 6 asked for, 2 predicted"));
  EXPECT_THAT(r.out, HasSubstr("1 row, precision fp4: the datasheet presets are BF16 or FP8"));
  EXPECT_THAT(r.out, HasSubstr("1 row, precision fp8 on a100-80gb, which has no FP8"));
  EXPECT_THAT(r.out, HasSubstr("1 row, GPU b300_sxm: not in settings/hardware/gpus.json"));
  EXPECT_THAT(r.out, HasSubstr("1 row, disaggregated"));
  const std::vector<std::string> lines = test::lines_of(test::read_file(dir / "predicted.csv"));
  ASSERT_EQ(lines.size(), 3u);
  // An FP8 model by its FP8 name: the catalog's model, in FP8.
  EXPECT_THAT(lines[2], HasSubstr("f,h200,llama-3.1-8b,fp8,1,256,16,2,"));
  const std::vector<std::string> cells = test::fields_of(lines[1]);
  EXPECT_EQ(cells[0], "a");
  EXPECT_EQ(cells[1], "h100");
  EXPECT_EQ(cells[2], "qwen3-32b");

  // --gpu and --model by the catalog's names or the file's own (rows e and f
  // are the 8B in FP8, on an A100 and an H200).
  for (const std::vector<std::string>& filter :
       {std::vector<std::string>{"--gpu", "h200", "1"},
        {"--gpu", "h200_sxm", "1"},
        {"--model", "llama-3.1-8b", "2"},
        {"--model", "nvidia/Llama-3.1-8B-Instruct-FP8", "2"}}) {
    const test::CliResult some = test::run_cli(
        {"presets", "deployments", "--deployments", rows.string(), filter[0], filter[1]});
    ASSERT_EQ(some.status, 0) << some.err;
    EXPECT_THAT(some.out, HasSubstr("6 rows read, " + filter[2] + " asked for, 1 predicted"))
        << filter[1];
  }

  // The same preset and load, as a user runs them: the same mean TTFT.
  ASSERT_EQ(test::run_cli({"presets", "derive", "--gpu", "h100", "--model", "qwen3-32b", "--tp",
                           "2", "--write", (dir / "preset.json").string()})
                .status,
            0);
  nlohmann::json preset = nlohmann::json::parse(test::read_file(dir / "preset.json"));
  preset["network"]["hops"] = nlohmann::json::array();
  test::write_file(dir / "load.json", preset.dump());
  const test::CliResult run =
      test::run_cli({"run", "--settings", (dir / "load.json").string(), "--max-concurrency", "4",
                     "--dataset-name", "random", "--random-input-len", "256", "--random-output-len",
                     "16", "--num-prompts", "100", "--plots", "none", "--per-request", "none",
                     "--output", (dir / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json summary =
      nlohmann::json::parse(test::read_file(dir / "run" / "summary.json"));
  EXPECT_DOUBLE_EQ(std::stod(cells[10]), 1000 * summary.at("ttft_mean_s").get<double>());
  EXPECT_DOUBLE_EQ(std::stod(cells[13]), 1000 * summary.at("tpot_mean_s").get<double>());
  // The measured throughput by the closed loop's identity: 4 clients of 16
  // tokens each in 100 + 15 x 20 ms, 160 tokens a second.
  EXPECT_DOUBLE_EQ(std::stod(cells[15]), 160);
  EXPECT_DOUBLE_EQ(std::stod(cells[16]), summary.at("output_throughput_tps").get<double>());
}

// A group's errors: |error| median and p90 as NumPy has them, the signed mean.
TEST(DeploymentCheck, ErrorStatsOfAGroup) {
  const ErrorStats e = error_stats({-10, 20, 30});
  EXPECT_DOUBLE_EQ(e.median, 20);
  EXPECT_DOUBLE_EQ(e.p90, 28);
  EXPECT_DOUBLE_EQ(e.bias, 40.0 / 3);
  EXPECT_DOUBLE_EQ(error_stats({}).median, 0);
}

TEST(DeploymentCheck, AMalformedRowIsRefusedNamingLineAndColumn) {
  const std::filesystem::path dir = test::fresh_dir();
  const auto refused = [&](const std::string& rows) {
    const std::filesystem::path path = test::write_file(dir / "d.csv", rows);
    return test::one_error_line(
        test::run_cli({"presets", "deployments", "--deployments", path.string()}));
  };
  EXPECT_THAT(refused(std::string(kDeploymentHeader) +
                      "a,x; silicon_concurrency=4,vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,"
                      "many,16,,,4,2,1,,100,20\n"),
              HasSubstr("d.csv:2: isl: expected a number of 0 or more, got 'many'"));
  EXPECT_THAT(refused(std::string(kDeploymentHeader) +
                      "a,x,vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,256,16,,,,2,1,,100,20\n"),
              HasSubstr("d.csv:2: silicon_data_source: expected silicon_concurrency=C"));
  EXPECT_THAT(refused("id,system\na,h100_sxm\n"), HasSubstr("d.csv:1: silicon_data_source: "
                                                            "missing column"));
  EXPECT_THAT(test::one_error_line(test::run_cli({"presets", "deployments"})),
              HasSubstr("--deployments: missing"));
}

}  // namespace
}  // namespace infersim
