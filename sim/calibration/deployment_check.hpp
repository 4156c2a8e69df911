// Measured vLLM deployments predicted row by row: each row of
// AIConfigurator's silicon_sample_vllm.csv (a deployment, a closed-loop load
// of C clients at fixed input and output lengths, its measured mean TTFT and
// TPOT) run on the replica derived for its GPU, model and tensor
// parallelism under the same load (MODEL.md section 4b). The rows are a
// check, never a fit: nothing is fitted on them here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "calibration/hardware_model.hpp"

namespace infersim {

struct DeploymentRow {
  std::uint64_t line = 0;  // in the file, for messages
  std::string id;
  std::string system;      // "h100_sxm"
  std::string model_path;  // "Qwen/Qwen3-32B"
  std::string precision;   // "" (BF16), "fp8", "fp4", ...
  std::string mode;        // "agg" or "disagg"
  std::string version;     // the engine's ("0.12.0")
  std::int64_t isl = 0, osl = 0, concurrency = 0;
  std::int64_t tp = 0, pp = 0, attention_dp = 0;
  double ttft_ms = 0, tpot_ms = 0;

  // The output tokens a second its C clients were served, by the closed
  // loop's identity: each client has one request in flight, taking
  // TTFT + (osl - 1) TPOT, so C osl / (TTFT + (osl - 1) TPOT). Derived from
  // the measured means, not measured itself (the file holds no throughput).
  double output_tps() const;
};

// The rows of `path`, every field checked: a missing column, a malformed
// number or an aggregated row whose concurrency neither
// `silicon_data_source`'s silicon_concurrency=C nor `batch_size` gives is an
// InputError naming the file, line and column. Empty pp and attention DP
// sizes are 1.
std::vector<DeploymentRow> read_deployments(const std::string& path);

// The catalog's name of the source's GPU ("h100" for "h100_sxm"); the
// source's own when the catalog has no such GPU.
std::string catalog_gpu_name(const std::string& system);
// The catalog's model of a model path ("llama-3.1-8b" for
// "nvidia/Llama-3.1-8B-Instruct-FP8"); empty when the catalog has none.
std::string catalog_model_name(const HardwareCatalog& catalog, const std::string& model_path);

struct DeploymentPrediction {
  const DeploymentRow* row = nullptr;
  std::string gpu, model;  // the catalog's names
  double ttft_ms = 0, tpot_ms = 0;
  double output_tps = 0;  // the run's output_throughput_tps
  std::int64_t kv_blocks = 0;
  // C requests of isl + osl tokens need more KV than the replica holds: the
  // engine queues or preempts, and the figures measure its capacity.
  bool kv_bound = false;
};

struct DeploymentCheck {
  std::vector<DeploymentPrediction> predicted;   // in the file's order
  std::map<std::string, std::size_t> uncovered;  // rows not replayed, by why
};

struct DeploymentOptions {
  // Each client's requests (at least `least_prompts` in all): the first wave
  // goes out together, so its phase weighs 1 / prompts_per_client.
  std::int64_t prompts_per_client = 10;
  std::int64_t least_prompts = 100;
  unsigned threads = 1;
  // Section 5c: each GPU's step table composed from its kernel tables under
  // `kernels_folder` (settings/kernels), c0 `overhead_s`; empty: the
  // datasheet's step costs.
  std::string kernels_folder;
  double overhead_s = 0;
};

// Replays every row the catalog covers (a GPU and model it has, BF16 or FP8,
// aggregated serving, no pipeline or attention data parallelism, weights
// that fit), each on its own thread from a pool; the others counted by why.
DeploymentCheck check_deployments(const std::vector<DeploymentRow>& rows,
                                  const HardwareCatalog& catalog, const DeploymentOptions& options);

// deployments.csv: a row a prediction (id, gpu, model, precision, tp, isl,
// osl, concurrency, kv_bound, then measured, predicted and error % of TTFT,
// TPOT and the output token throughput, the measured one as output_tps()
// derives it).
std::string deployments_csv(const DeploymentCheck& check);

// Signed errors in percent of the measured, over a group of rows: the
// median and p90 of their absolute values, and their mean (the bias).
struct ErrorStats {
  double median = 0, p90 = 0, bias = 0;
};
ErrorStats error_stats(const std::vector<double>& signed_pct);

// A group of rows and its errors: TTFT, TPOT and the output token
// throughput (against the rows' output_tps()).
struct DeploymentGroup {
  std::string gpu, model, precision;
  bool kv_bound = false;
  std::size_t rows = 0;
  ErrorStats ttft, tpot, output;
};
// A group a (GPU, model, precision), the KV-bound rows in groups of their own.
std::vector<DeploymentGroup> deployment_groups(const DeploymentCheck& check);

}  // namespace infersim
