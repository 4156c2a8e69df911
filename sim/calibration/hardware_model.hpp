// A batching replica derived from what can be known before buying the GPU: the
// GPU's datasheet, the model's published architecture, the deployment
// (tensor and data parallelism, vLLM's engine limits) and efficiency factors
// fitted once on measured runs (calibration/batching_calibration). The KV blocks
// follow vLLM's own memory accounting; the step cost is a roofline a step
// (model/step_cost.hpp): the weights, the KV and the experts read at the
// memory roof against the FLOPs at the compute roof, plus a fixed overhead
// and the tensor-parallel all-reduces over the GPUs' link.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/batching_knobs.hpp"
#include "model/step_cost.hpp"

namespace infersim {

struct GpuSpec {
  std::string name;          // the key: "rtx-4090"
  std::string title;         // "GeForce RTX 4090 24GB"
  double memory_bytes = 0;   // as the driver reports it to CUDA (vLLM's total_gpu_memory)
  double bandwidth_bps = 0;  // memory bandwidth, bytes/s (datasheet, decimal)
  double bf16_flops = 0;     // dense BF16 tensor FLOP/s with FP32 accumulation
  double fp8_flops = 0;      // dense FP8 tensor FLOP/s; 0: no FP8
  double tdp_w = 0;
  double link_bps = 0;        // GPU to GPU, one direction, bytes/s (NVLink or PCIe)
  double link_latency_s = 0;  // one collective's latency over that link
  std::string source;
};

struct ModelSpec {
  std::string name;   // the key: "llama-3.1-8b"
  std::string hf_id;  // "meta-llama/Llama-3.1-8B"
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t intermediate = 0;  // the dense MLP's (unused when every layer is MoE)
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t vocab = 0;
  std::int64_t max_position = 0;
  bool qk_norm = false;             // Qwen3's per-head q and k norms
  bool tied = false;                // embeddings tied to the LM head
  std::int64_t experts = 0;         // E; 0 for a dense model (every layer MoE otherwise)
  std::int64_t active_experts = 0;  // k
  std::int64_t moe_intermediate = 0;
  std::string source;

  double attention_params() const;    // a layer's q, k, v, o (and q, k norms)
  double mlp_params() const;          // a layer's dense MLP, or its router
  double expert_params() const;       // one expert of one layer
  double embedding_params() const;    // vocab x hidden
  double params() const;              // the whole model
  double active_params() const;       // those a token passes through (k experts)
  double kv_bytes_per_token() const;  // K and V of every layer, BF16
  // The family the model's evidence is shared in: its name before the size
  // ("llama-3.1" for llama-3.1-8b and -70b), "-moe" added for a mixture of
  // experts (qwen3-30b-a3b is "qwen3-moe", qwen3-32b "qwen3").
  std::string family() const;
};

// Shares of the datasheet's roofs a serving engine reaches, and its fixed
// cost a step (BATCHING.md section 5's c0 becomes the overhead; the weights'
// read is a term of its own).
struct Efficiency {
  double overhead_s = 0;   // a step's fixed cost beyond reading and computing
  double weights = 0.7;    // bandwidth share reading weights (and experts)
  double kv = 0.7;         // bandwidth share reading a decode's context
  double compute = 0.5;    // compute share of the tokens' GEMMs
  double attention = 0.5;  // compute share of prefill attention
  double link = 0.5;  // share of the GPU link's bandwidth (and of its latency) collectives reach
  // The step cost's form the factors were fitted with (and presets use):
  // the roofline, or section 5's sum.
  bool roofline = false;
};
// The fitted parameters θ, in the order of Efficiency's fields:
// (overhead_s, 1/weights, 1/kv, 1/compute, 1/attention, 1/link). The step
// cost's coefficients are linear in them.
inline constexpr std::size_t kEfficiencyParameters = 6;
using EfficiencyVector = std::array<double, kEfficiencyParameters>;
EfficiencyVector to_vector(const Efficiency& e);
Efficiency from_vector(const EfficiencyVector& v);
extern const char* const kEfficiencyKeys[kEfficiencyParameters];

struct Deployment {
  std::int64_t tensor_parallel = 1;  // GPUs a replica
  std::int64_t data_parallel = 1;    // replicas in lockstep sharing the experts
  std::int64_t max_num_seqs = 0;     // 0: vLLM's default for the GPU
  std::int64_t max_num_batched_tokens = 0;
  double gpu_memory_utilization = 0.9;
  std::int64_t block_tokens = 16;
  // The weights' number format: "bf16", or "fp8" (vLLM's W8A8: the weights
  // a byte a parameter, the GEMMs at the GPU's FP8 rate; activations, the
  // KV cache and the collectives stay BF16).
  std::string dtype = "bf16";
};
// Bytes a weight takes in the deployment's format.
double weight_bytes(const Deployment& deployment);
// The FLOP/s of the deployment's GEMMs on one GPU.
double gemm_flops(const GpuSpec& gpu, const Deployment& deployment);

// vLLM 0.19's API-server defaults (EngineArgs.get_batch_defaults): 1024 and
// 8192 on a GPU of at least 70 GiB that is not an A100, else 256 and 2048.
void fill_engine_defaults(const GpuSpec& gpu, Deployment& deployment);

// What vLLM keeps from a GPU's memory besides the weights and the KV cache,
// by its profiling (determine_available_memory): the non-torch allocations
// and CUDA graphs (a constant a GPU) and the peak activations of a dummy
// step of max_num_batched_tokens and of the sampler over max_num_seqs.
struct MemoryReserve {
  double fixed_bytes = 0;  // non-torch memory, CUDA graphs, workspaces
  double activation_bytes = 0;
  double total() const { return fixed_bytes + activation_bytes; }
};
MemoryReserve memory_reserve(const ModelSpec& model, const Deployment& deployment);

// Usable KV blocks a replica (vLLM's num_gpu_blocks - 1): each GPU's share of
// gpu_memory_utilization x its memory, less its share of the weights and the
// reserve, over a block's bytes on that GPU.
std::int64_t kv_blocks_of(const GpuSpec& gpu, const ModelSpec& model, const Deployment& deployment);

// The step cost's coefficients as base + map * θ for this GPU, model and
// deployment: the map carries the physics (bytes over bandwidth, FLOPs over
// FLOP/s, collectives over the link); the base is what no factor scales
// (nothing today).
struct CostMap {
  StepCoefficients base{};
  std::array<EfficiencyVector, kStepTerms> map{};  // map[term][parameter]
  StepCoefficients at(const EfficiencyVector& theta) const;
};
CostMap cost_map(const GpuSpec& gpu, const ModelSpec& model, const Deployment& deployment);

// The whole replica: the deployment's limits, the KV blocks, max_model_len
// (min(context, K B)), the step cost in the factors' form, the experts,
// asynchronous scheduling (vLLM's default since 0.10, as the factors were
// fitted), the power (TDP a GPU stepping, 15 % of it idle). Throws
// InputError when the weights do not fit.
BatchingKnobs derive_knobs(const GpuSpec& gpu, const ModelSpec& model, const Deployment& deployment,
                           const Efficiency& efficiency);

// One run the factors were checked on with nothing fitted on it: its GPU and
// model, and the mean |error| in percent of its TTFT, TPOT and latency (mean,
// median, p90, p99) as predicted, by "ttft", "tpot" and "latency".
struct ErrorEvidence {
  std::string run;
  std::string gpu;
  std::string model;
  std::map<std::string, double> error_pct;
};

// How far a preset may be, and the evidence that says so.
struct ExpectedError {
  std::map<std::string, double> pct;  // "ttft", "tpot", "latency"
  std::string from;                   // "left out: RUN (its GPU and model family)", ...
};

// The GPUs, models and fitted factors of settings/hardware/ (gpus.json,
// models.json, efficiency.json, and held_out.json when there is one),
// checked as they are read: an unknown key, a missing one or an impossible
// value is an InputError naming the file and the key.
struct HardwareCatalog {
  std::map<std::string, GpuSpec> gpus;
  std::map<std::string, ModelSpec> models;
  Efficiency efficiency;
  std::string efficiency_note;  // where the factors come from
  // The mean |error| in percent of a run predicted with factors fitted on the
  // others (leaving one out), for "ttft", "tpot" and "latency"; empty when
  // the factors were not so checked.
  std::map<std::string, double> expected_error_pct;
  // Each run left out of the fit in turn (efficiency.json's
  // expected_error_by_run), and runs of GPUs nothing was fitted on
  // (held_out.json: `presets predict --write`).
  std::vector<ErrorEvidence> left_out;
  std::vector<ErrorEvidence> held_out;
  const GpuSpec& gpu(const std::string& name, const std::string& source) const;
  const ModelSpec& model(const std::string& name, const std::string& source) const;
  // The model whose Hugging Face id is `hf_id` (case-insensitive), or null.
  const ModelSpec* model_by_id(const std::string& hf_id) const;
  // The GPU whose title or name `device_name` contains ("NVIDIA GeForce RTX
  // 4090" is rtx-4090), or null.
  const GpuSpec* gpu_by_device(const std::string& device_name) const;
};
HardwareCatalog load_hardware(const std::string& folder);

// The least KV a replica must hold: one request of 32k tokens (vLLM refuses
// to start when its cache cannot hold one request of max_model_len).
inline constexpr std::int64_t kLeastKvTokens = 32768;
// The smallest tensor parallelism of 1, 2, 4, 8 at which the KV cache holds
// kLeastKvTokens; 0 when none does.
std::int64_t least_tensor_parallel(const GpuSpec& gpu, const ModelSpec& model,
                                   Deployment deployment);

// A preset's expected error from the evidence that covers it: the left-out
// runs of its GPU and model family where there are some; else the runs held
// out of every fit (another GPU's); else the mean over the left-out runs.
ExpectedError expected_error(const HardwareCatalog& catalog, const GpuSpec& gpu,
                             const ModelSpec& model);

// Reads the evidence list of a JSON array of {run, gpu, model, ttft, tpot,
// latency} at `key` of `path`.
std::vector<ErrorEvidence> read_error_evidence(const nlohmann::json& list, const std::string& path,
                                               const std::string& key);
nlohmann::ordered_json error_evidence_json(const std::vector<ErrorEvidence>& evidence);

// A preset file: `meta` (the pair, the tensor parallelism, the factors and
// the command that derived it, which the settings reader skips), the server
// kind and the batching knobs, costs and powers to four significant digits.
nlohmann::ordered_json preset_document(const GpuSpec& gpu, const ModelSpec& model,
                                       const Deployment& deployment, const BatchingKnobs& knobs,
                                       const HardwareCatalog& catalog);

}  // namespace infersim
