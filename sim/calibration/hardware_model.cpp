#include "calibration/hardware_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"

namespace infersim {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kBf16Bytes = 2;
// No datasheet gives an idle power: 15 % of the TDP (105 W for an H100).
constexpr double kIdleShareOfTdp = 0.15;

double d(std::int64_t x) {
  return static_cast<double>(x);
}

}  // namespace

const char* const kEfficiencyKeys[kEfficiencyParameters] = {"overhead_s", "weights",   "kv",
                                                            "compute",    "attention", "link"};

double ModelSpec::attention_params() const {
  const double q = d(heads * head_dim), kv = d(kv_heads * head_dim);
  return d(hidden) * q + 2 * d(hidden) * kv + q * d(hidden) + (qk_norm ? 2 * d(head_dim) : 0);
}

double ModelSpec::mlp_params() const {
  return experts > 0 ? d(hidden) * d(experts) : 3 * d(hidden) * d(intermediate);
}

double ModelSpec::expert_params() const {
  return experts > 0 ? 3 * d(hidden) * d(moe_intermediate) : 0;
}

double ModelSpec::embedding_params() const {
  return d(vocab) * d(hidden);
}

double ModelSpec::params() const {
  const double layer =
      attention_params() + mlp_params() + 2 * d(hidden) + d(experts) * expert_params();
  return d(layers) * layer + (tied ? 1 : 2) * embedding_params() + d(hidden);
}

double ModelSpec::active_params() const {
  const double layer =
      attention_params() + mlp_params() + 2 * d(hidden) + d(active_experts) * expert_params();
  return d(layers) * layer + (tied ? 1 : 2) * embedding_params() + d(hidden);
}

double ModelSpec::kv_bytes_per_token() const {
  return 2 * d(layers * kv_heads * head_dim) * kBf16Bytes;
}

EfficiencyVector to_vector(const Efficiency& e) {
  return {e.overhead_s, 1 / e.weights, 1 / e.kv, 1 / e.compute, 1 / e.attention, 1 / e.link};
}

Efficiency from_vector(const EfficiencyVector& v) {
  return {v[0], 1 / v[1], 1 / v[2], 1 / v[3], 1 / v[4], 1 / v[5], false};
}

void fill_engine_defaults(const GpuSpec& gpu, Deployment& deployment) {
  const bool large = gpu.memory_bytes >= 70 * kGiB && gpu.name.rfind("a100", 0) != 0;
  if (deployment.max_num_seqs == 0) deployment.max_num_seqs = large ? 1024 : 256;
  if (deployment.max_num_batched_tokens == 0) {
    deployment.max_num_batched_tokens = large ? 8192 : 2048;
  }
}

MemoryReserve memory_reserve(const ModelSpec& model, const Deployment& deployment) {
  MemoryReserve r;
  // Non-torch allocations (the CUDA context's share vLLM counts, cuBLAS and
  // NCCL workspaces) and the CUDA graphs' pools.
  r.fixed_bytes = 0.5 * kGiB;
  // The profiling step's largest live tensors, a GPU: the MLP's gate and up
  // output and its activation (3 x its width) and a few hidden states for
  // max_num_batched_tokens tokens; the sampler's logits and probabilities
  // (float32, twice) for max_num_seqs requests.
  const double width =
      model.experts > 0 ? d(model.active_experts * model.moe_intermediate) : d(model.intermediate);
  const double tp = d(deployment.tensor_parallel);
  const double tokens = d(deployment.max_num_batched_tokens);
  r.activation_bytes = tokens * (3 * width / tp + 4 * d(model.hidden)) * kBf16Bytes +
                       d(deployment.max_num_seqs) * d(model.vocab) * 4 * 2;
  return r;
}

namespace {

// Weights a GPU holds: its tensor-parallel share, with the experts also
// split among the data-parallel replicas.
double weight_bytes_a_gpu(const ModelSpec& model, const Deployment& deployment) {
  const double experts = d(model.layers) * d(model.experts) * model.expert_params();
  const double held = model.params() - experts + experts / d(deployment.data_parallel);
  return held * weight_bytes(deployment) / d(deployment.tensor_parallel);
}

}  // namespace

double weight_bytes(const Deployment& deployment) {
  return deployment.dtype == "fp8" ? 1 : kBf16Bytes;
}

double gemm_flops(const GpuSpec& gpu, const Deployment& deployment) {
  return deployment.dtype == "fp8" ? gpu.fp8_flops : gpu.bf16_flops;
}

std::int64_t kv_blocks_of(const GpuSpec& gpu, const ModelSpec& model,
                          const Deployment& deployment) {
  const double tp = d(deployment.tensor_parallel);
  const double available = deployment.gpu_memory_utilization * gpu.memory_bytes -
                           weight_bytes_a_gpu(model, deployment) -
                           memory_reserve(model, deployment).total();
  const double block_bytes = d(deployment.block_tokens) * model.kv_bytes_per_token() / tp;
  return static_cast<std::int64_t>(std::floor(available / block_bytes)) - 1;
}

StepCoefficients CostMap::at(const EfficiencyVector& theta) const {
  StepCoefficients c = base;
  for (std::size_t i = 0; i < kStepTerms; ++i) {
    for (std::size_t j = 0; j < kEfficiencyParameters; ++j)
      c[i] += map[i][j] * theta[j];
  }
  return c;
}

CostMap cost_map(const GpuSpec& gpu, const ModelSpec& model, const Deployment& deployment) {
  CostMap m;
  const double tp = d(deployment.tensor_parallel);
  const double bandwidth = tp * gpu.bandwidth_bps;
  const double flops = tp * gemm_flops(gpu, deployment);
  // Attention's matrix products run in BF16 whatever the weights' format.
  const double attention_flops = tp * gpu.bf16_flops;
  const double embedding = model.embedding_params();
  const double all_experts = d(model.layers) * d(model.experts) * model.expert_params();
  // Read once a step: every weight but the embedding table (a lookup; tied
  // to the LM head, it is read as the head) and the experts (their own term).
  const double read = model.params() - (model.tied ? 0 : embedding) - all_experts;
  m.map[kStepBase][0] = 1;
  m.map[kStepWeights][1] = read * weight_bytes(deployment) / bandwidth;
  m.map[kStepExpert][1] =
      d(model.layers) * model.expert_params() * weight_bytes(deployment) / bandwidth;
  m.map[kStepDecodeContext][2] = model.kv_bytes_per_token() / bandwidth;
  // A multiply-add for each weight a token passes through: a prefill token
  // skips the lookup and the LM head (run on its last token alone), a decode
  // runs the head.
  const double prefill = model.active_params() - (model.tied ? 1 : 2) * embedding;
  m.map[kStepPrefillToken][3] = 2 * prefill / flops;
  m.map[kStepDecodeToken][3] = 2 * (prefill + embedding) / flops;
  // QK^T and PV: 2 FLOPs a multiply-add each, every head of every layer.
  m.map[kStepPrefillPair][4] = 4 * d(model.layers * model.heads * model.head_dim) / attention_flops;
  // Two all-reduces a layer across the tensor-parallel GPUs (a ring: each
  // sends 2 (TP - 1) / TP of a token's hidden state), and with experts split
  // among data-parallel replicas, a gather of the others' tokens and a
  // reduce-scatter of their outputs a layer; each a latency a step, and its
  // bytes a token.
  double bytes_a_token = 0, collectives = 0;
  if (deployment.tensor_parallel > 1) {
    bytes_a_token += 2 * d(model.layers) * 2 * (tp - 1) / tp * d(model.hidden) * kBf16Bytes;
    collectives += 2 * d(model.layers);
  }
  if (model.experts > 0 && deployment.data_parallel > 1) {
    bytes_a_token +=
        2 * d(model.layers) * d(deployment.data_parallel - 1) * d(model.hidden) * kBf16Bytes / tp;
    collectives += 2 * d(model.layers);
  }
  if (collectives > 0) {
    m.map[kStepBase][5] = collectives * gpu.link_latency_s;
    m.map[kStepPrefillToken][5] = bytes_a_token / gpu.link_bps;
    m.map[kStepDecodeToken][5] = bytes_a_token / gpu.link_bps;
  }
  return m;
}

BatchingKnobs derive_knobs(const GpuSpec& gpu, const ModelSpec& model,
                           const Deployment& deployment_in, const Efficiency& efficiency) {
  Deployment deployment = deployment_in;
  fill_engine_defaults(gpu, deployment);
  if (deployment.dtype != "bf16" && deployment.dtype != "fp8") {
    throw InputError("", 0, "--dtype", "must be bf16 or fp8, not '" + deployment.dtype + "'");
  }
  if (deployment.dtype == "fp8" && gpu.fp8_flops <= 0) {
    throw InputError("", 0, "--dtype",
                     gpu.name + " has no FP8 tensor cores (no fp8_tflops in gpus.json): use bf16");
  }
  BatchingKnobs k;
  k.replicas = deployment.data_parallel;
  k.lockstep = deployment.data_parallel > 1 && model.experts > 0;
  k.max_num_seqs = deployment.max_num_seqs;
  k.max_num_batched_tokens = deployment.max_num_batched_tokens;
  k.block_tokens = deployment.block_tokens;
  k.kv_blocks = kv_blocks_of(gpu, model, deployment);
  if (k.kv_blocks < 1) {
    throw InputError(model.name, 0, "tensor_parallel",
                     model.name + " does not fit on " + std::to_string(deployment.tensor_parallel) +
                         " " + gpu.name + " at gpu_memory_utilization " +
                         std::to_string(deployment.gpu_memory_utilization) +
                         ": no memory is left for its KV cache");
  }
  k.max_model_len = std::min(model.max_position, k.kv_blocks * k.block_tokens);
  set_coefficients(k, cost_map(gpu, model, deployment).at(to_vector(efficiency)));
  k.step_roofline = efficiency.roofline;
  k.async_scheduling = true;
  k.moe_experts = model.experts;
  k.moe_active_experts = model.active_experts;
  const double tp = d(deployment.tensor_parallel);
  k.gpu_max_w = tp * gpu.tdp_w;
  // A prompt token's KV, all layers, K and V, in BF16: what a disaggregated
  // prefill replica sends (BATCHING.md section 12).
  k.kv_bytes_per_token = model.kv_bytes_per_token();
  k.gpu_idle_w = tp * gpu.tdp_w * kIdleShareOfTdp;
  return k;
}

namespace {

// Four significant digits, as the preset files hold them.
double rounded(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", v);
  return std::stod(text);
}

// The table with its seconds to four significant digits, as the file has them.
nlohmann::ordered_json rounded_table(StepTable t) {
  for (StepCurve* c : {&t.tokens, &t.expert_tokens, &t.prefill_pairs}) {
    for (double& s : c->s)
      s = rounded(s);
  }
  for (double& s : t.decode.s)
    s = rounded(s);
  return t.to_json();
}

}  // namespace

nlohmann::ordered_json preset_document(const GpuSpec& gpu, const ModelSpec& model,
                                       const Deployment& deployment, const BatchingKnobs& k,
                                       const HardwareCatalog& catalog) {
  nlohmann::ordered_json doc;
  const bool fp8 = deployment.dtype == "fp8";
  doc["meta"]["preset"] = gpu.name + "-" + model.name + (fp8 ? "-fp8" : "");
  doc["meta"]["gpu"] = gpu.title;
  doc["meta"]["model"] = model.hf_id;
  doc["meta"]["tensor_parallel"] = deployment.tensor_parallel;
  if (fp8) doc["meta"]["dtype"] = "fp8";
  doc["meta"]["hardware"] = {{"gpu", gpu.name}, {"model", model.name}};
  const bool tables = !k.step_table.empty();
  doc["meta"]["step_costs"] = tables ? "operator-tables" : "datasheet";
  if (tables) {
    doc["meta"]["kernel_tables"] = {{"folder", "settings/kernels/" + gpu.name},
                                    {"overhead_s", k.step_base_s}};
  } else {
    doc["meta"]["efficiency"] = {{"overhead_s", catalog.efficiency.overhead_s},
                                 {"weights", catalog.efficiency.weights},
                                 {"kv", catalog.efficiency.kv},
                                 {"compute", catalog.efficiency.compute},
                                 {"attention", catalog.efficiency.attention},
                                 {"link", catalog.efficiency.link},
                                 {"fitted_on", catalog.efficiency_note}};
  }
  if (tables) {
    // The datasheet's evidence says nothing of the tables' step.
    doc["meta"]["expected_error_from"] =
        "none kept yet: presets validate --step-costs tables and presets deployments "
        "--step-costs tables check this form (settings/presets/README.md)";
  } else if (const ExpectedError e = expected_error(catalog, gpu, model); !e.pct.empty()) {
    doc["meta"]["expected_error_pct"] = e.pct;
    doc["meta"]["expected_error_from"] = e.from;
  }
  doc["meta"]["derivation"] = "infersim presets derive --gpu " + gpu.name + " --model " +
                              model.name + " --tp " + std::to_string(deployment.tensor_parallel) +
                              (fp8 ? " --dtype fp8" : "") + (tables ? " --step-costs tables" : "") +
                              " (settings/presets/README.md)";
  doc["server"]["kind"] = "batching";
  auto& b = doc["batching"];
  if (k.replicas > 1) b["replicas"] = k.replicas;
  b["max_num_seqs"] = k.max_num_seqs;
  b["max_num_batched_tokens"] = k.max_num_batched_tokens;
  b["block_tokens"] = k.block_tokens;
  b["kv_blocks"] = k.kv_blocks;
  b["max_model_len"] = k.model_len();
  const StepCoefficients c = coefficients_of(k);
  for (std::size_t i = 0; i < kStepTerms; ++i) {
    if (c[i] != 0 || i < kStepWeights) b[kStepTermKeys[i]] = rounded(c[i]);
  }
  b["step_roofline"] = k.step_roofline;
  if (tables) b["step_table"] = rounded_table(k.step_table);
  b["async_scheduling"] = k.async_scheduling;
  if (k.moe_experts > 0) {
    b["moe_experts"] = k.moe_experts;
    b["moe_active_experts"] = k.moe_active_experts;
  }
  if (k.lockstep) b["lockstep"] = true;
  b["gpu_idle_w"] = rounded(k.gpu_idle_w);
  b["gpu_max_w"] = rounded(k.gpu_max_w);
  b["kv_bytes_per_token"] = k.kv_bytes_per_token;
  return doc;
}

std::int64_t least_tensor_parallel(const GpuSpec& gpu, const ModelSpec& model,
                                   Deployment deployment) {
  fill_engine_defaults(gpu, deployment);
  for (std::int64_t tp = 1; tp <= 8; tp *= 2) {
    deployment.tensor_parallel = tp;
    if (kv_blocks_of(gpu, model, deployment) * deployment.block_tokens >= kLeastKvTokens) {
      return tp;
    }
  }
  return 0;
}

// The catalog's files.

namespace {

using json = nlohmann::json;

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open the file");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(path, 0, "", std::string("not valid JSON: ") + e.what());
  }
}

// Reads an object's keys into a struct, each checked; unknown keys refused.
class Fields {
 public:
  Fields(const json& object, std::string path, std::string where)
      : object_(object), path_(std::move(path)), where_(std::move(where)) {
    if (!object_.is_object()) fail("", "expected an object");
  }
  double real(const char* key, double least, bool optional = false, double fallback = 0) {
    seen_.insert(key);
    const auto it = object_.find(key);
    if (it == object_.end()) {
      if (optional) return fallback;
      fail(key, "missing");
    }
    if (!it->is_number()) fail(key, "expected a number, got " + it->dump());
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < least) {
      char bound[32];
      std::snprintf(bound, sizeof(bound), "%g", least);
      fail(key, std::string("must be at least ") + bound + ", not " + it->dump());
    }
    return v;
  }
  std::int64_t whole(const char* key, std::int64_t least, bool optional = false) {
    seen_.insert(key);
    const auto it = object_.find(key);
    if (it == object_.end()) {
      if (optional) return 0;
      fail(key, "missing");
    }
    if (!it->is_number_integer()) fail(key, "expected a whole number, got " + it->dump());
    const auto v = it->get<std::int64_t>();
    if (v < least) fail(key, "must be at least " + std::to_string(least) + ", not " + it->dump());
    return v;
  }
  bool flag(const char* key) {
    seen_.insert(key);
    const auto it = object_.find(key);
    if (it == object_.end()) return false;
    if (!it->is_boolean()) fail(key, "expected true or false, got " + it->dump());
    return it->get<bool>();
  }
  std::string text(const char* key, bool optional = false) {
    seen_.insert(key);
    const auto it = object_.find(key);
    if (it == object_.end()) {
      if (optional) return "";
      fail(key, "missing");
    }
    if (!it->is_string()) fail(key, "expected text, got " + it->dump());
    return it->get<std::string>();
  }
  void done() const {
    for (const auto& [key, value] : object_.items()) {
      if (!seen_.count(key)) fail(key, "unknown key");
    }
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(path_, 0, where_ + (key.empty() ? "" : "." + key), what);
  }

 private:
  const json& object_;
  std::string path_;
  std::string where_;
  std::set<std::string> seen_;
};

const json& section(const json& doc, const char* key, const std::string& path) {
  const auto it = doc.find(key);
  if (!doc.is_object() || it == doc.end() || !it->is_object()) {
    throw InputError(path, 0, key, "missing: expected an object of entries");
  }
  return *it;
}

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

HardwareCatalog load_hardware(const std::string& folder) {
  HardwareCatalog c;
  const std::string gpus_path = folder + "/gpus.json";
  const json gpus = read_json_file(gpus_path);
  for (const auto& [name, entry] : section(gpus, "gpus", gpus_path).items()) {
    Fields f(entry, gpus_path, "gpus." + name);
    GpuSpec g;
    g.name = name;
    g.title = f.text("title");
    g.memory_bytes = f.real("memory_gib", 1) * kGiB;
    g.bandwidth_bps = f.real("bandwidth_gb_s", 1) * 1e9;
    g.bf16_flops = f.real("bf16_tflops", 1) * 1e12;
    g.fp8_flops = f.real("fp8_tflops", 1, true) * 1e12;
    g.tdp_w = f.real("tdp_w", 1);
    g.link_bps = f.real("link_gb_s", 0.001) * 1e9;
    g.link_latency_s = f.real("link_latency_s", 0);
    g.source = f.text("source");
    f.done();
    c.gpus[name] = g;
  }
  const std::string models_path = folder + "/models.json";
  const json models = read_json_file(models_path);
  for (const auto& [name, entry] : section(models, "models", models_path).items()) {
    Fields f(entry, models_path, "models." + name);
    ModelSpec m;
    m.name = name;
    m.hf_id = f.text("hf_id");
    m.layers = f.whole("num_hidden_layers", 1);
    m.hidden = f.whole("hidden_size", 1);
    m.intermediate = f.whole("intermediate_size", 1);
    m.heads = f.whole("num_attention_heads", 1);
    m.kv_heads = f.whole("num_key_value_heads", 1);
    m.head_dim = f.whole("head_dim", 1);
    m.vocab = f.whole("vocab_size", 1);
    m.max_position = f.whole("max_position_embeddings", 1);
    m.qk_norm = f.flag("qk_norm");
    m.tied = f.flag("tie_word_embeddings");
    m.experts = f.whole("num_experts", 0, true);
    m.active_experts = f.whole("num_experts_per_tok", 0, true);
    m.moe_intermediate = f.whole("moe_intermediate_size", 0, true);
    m.source = f.text("source");
    f.done();
    if ((m.experts > 0) != (m.active_experts > 0) || (m.experts > 0) != (m.moe_intermediate > 0) ||
        m.active_experts > m.experts) {
      f.fail("num_experts",
             "a mixture-of-experts model sets num_experts, num_experts_per_tok "
             "(at most num_experts) and moe_intermediate_size; a dense one none");
    }
    c.models[name] = m;
  }
  const std::string efficiency_path = folder + "/efficiency.json";
  const json efficiency = read_json_file(efficiency_path);
  const auto form = efficiency.find("form");
  if (form == efficiency.end() || !form->is_string() || (*form != "sum" && *form != "roofline")) {
    throw InputError(efficiency_path, 0, "form", "expected \"sum\" or \"roofline\"");
  }
  c.efficiency.roofline = *form == "roofline";
  Fields f(section(efficiency, "factors", efficiency_path), efficiency_path, "factors");
  c.efficiency.overhead_s = f.real("overhead_s", 0);
  c.efficiency.weights = f.real("weights", 1e-3);
  c.efficiency.kv = f.real("kv", 1e-3);
  c.efficiency.compute = f.real("compute", 1e-3);
  c.efficiency.attention = f.real("attention", 1e-3);
  c.efficiency.link = f.real("link", 1e-3);
  f.done();
  if (const auto e = efficiency.find("expected_error_pct"); e != efficiency.end()) {
    Fields errors(*e, efficiency_path, "expected_error_pct");
    for (const char* key : {"ttft", "tpot", "latency"})
      c.expected_error_pct[key] = errors.real(key, 0);
    errors.done();
  }
  if (efficiency.contains("fitted_on") && efficiency["fitted_on"].is_string()) {
    c.efficiency_note = efficiency["fitted_on"].get<std::string>();
  }
  if (const auto e = efficiency.find("expected_error_by_run"); e != efficiency.end()) {
    c.left_out = read_error_evidence(*e, efficiency_path, "expected_error_by_run");
  }
  const std::string held_path = folder + "/held_out.json";
  if (std::filesystem::exists(held_path)) {
    const json held = read_json_file(held_path);
    if (!held.is_object() || !held.contains("runs")) {
      throw InputError(held_path, 0, "runs", "missing: expected a list of runs");
    }
    c.held_out = read_error_evidence(held["runs"], held_path, "runs");
  }
  return c;
}

std::string ModelSpec::family() const {
  // The name's words up to the first that is a size ("8b", "30b", "1.5b").
  std::string out;
  std::size_t at = 0;
  while (at < name.size()) {
    const std::size_t dash = std::min(name.find('-', at), name.size());
    const std::string word = name.substr(at, dash - at);
    const bool size = word.size() >= 2 && word.back() == 'b' &&
                      word.find_first_not_of("0123456789.", 0) == word.size() - 1;
    if (size) break;
    out += (out.empty() ? "" : "-") + word;
    at = dash + 1;
  }
  return out + (experts > 0 ? "-moe" : "");
}

std::vector<ErrorEvidence> read_error_evidence(const json& list, const std::string& path,
                                               const std::string& key) {
  if (!list.is_array()) throw InputError(path, 0, key, "expected a list of runs");
  std::vector<ErrorEvidence> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    Fields f(list[i], path, key + "[" + std::to_string(i) + "]");
    ErrorEvidence e;
    e.run = f.text("run");
    e.gpu = f.text("gpu");
    e.model = f.text("model");
    for (const char* figure : {"ttft", "tpot", "latency"})
      e.error_pct[figure] = f.real(figure, 0);
    f.done();
    out.push_back(std::move(e));
  }
  return out;
}

nlohmann::ordered_json error_evidence_json(const std::vector<ErrorEvidence>& evidence) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ErrorEvidence& e : evidence) {
    nlohmann::ordered_json row;
    row["run"] = e.run;
    row["gpu"] = e.gpu;
    row["model"] = e.model;
    for (const char* figure : {"ttft", "tpot", "latency"})
      row[figure] = e.error_pct.at(figure);
    out.push_back(row);
  }
  return out;
}

ExpectedError expected_error(const HardwareCatalog& catalog, const GpuSpec& gpu,
                             const ModelSpec& model) {
  const auto family_of = [&](const std::string& name) {
    const auto m = catalog.models.find(name);
    return m == catalog.models.end() ? std::string() : m->second.family();
  };
  // The mean of the runs' errors, a figure at a time, to a tenth.
  const auto mean_of = [](const std::vector<const ErrorEvidence*>& runs) {
    std::map<std::string, double> pct;
    for (const char* figure : {"ttft", "tpot", "latency"}) {
      double sum = 0;
      for (const ErrorEvidence* e : runs)
        sum += e->error_pct.at(figure);
      pct[figure] = std::round(10 * sum / static_cast<double>(runs.size())) / 10;
    }
    return pct;
  };
  const auto names = [](const std::vector<const ErrorEvidence*>& runs) {
    std::string out;
    for (const ErrorEvidence* e : runs)
      out += (out.empty() ? "" : ", ") + e->run;
    return out;
  };
  ExpectedError out;
  std::vector<const ErrorEvidence*> own;
  for (const ErrorEvidence& e : catalog.left_out)
    if (e.gpu == gpu.name && family_of(e.model) == model.family()) own.push_back(&e);
  if (!own.empty()) {
    out.pct = mean_of(own);
    out.from = "the mean |error| of " + names(own) + (own.size() == 1 ? ", a run" : ", runs") +
               " of its GPU and model family left out of the fit";
    return out;
  }
  std::vector<const ErrorEvidence*> held;
  for (const ErrorEvidence& e : catalog.held_out)
    held.push_back(&e);
  if (!held.empty()) {
    out.pct = mean_of(held);
    bool same = std::all_of(held.begin(), held.end(), [&](const ErrorEvidence* e) {
      return e->gpu == gpu.name && family_of(e->model) == model.family();
    });
    out.from = "the mean |error| of " + names(held) + (held.size() == 1 ? ", a run" : ", runs") +
               (same ? " of its GPU and model family" : " on another GPU than those fitted on") +
               ", held out of every fit";
    return out;
  }
  if (!catalog.expected_error_pct.empty()) {
    out.pct = catalog.expected_error_pct;
    out.from = "the mean |error| of each fitted run left out in turn";
  }
  return out;
}

const GpuSpec& HardwareCatalog::gpu(const std::string& name, const std::string& source) const {
  const auto it = gpus.find(name);
  if (it == gpus.end()) {
    std::string known;
    for (const auto& [key, g] : gpus)
      known += (known.empty() ? "" : ", ") + key;
    throw InputError(source, 0, "gpu", "unknown GPU '" + name + "' (known: " + known + ")");
  }
  return it->second;
}

const ModelSpec& HardwareCatalog::model(const std::string& name, const std::string& source) const {
  const auto it = models.find(name);
  if (it == models.end()) {
    std::string known;
    for (const auto& [key, m] : models)
      known += (known.empty() ? "" : ", ") + key;
    throw InputError(source, 0, "model", "unknown model '" + name + "' (known: " + known + ")");
  }
  return it->second;
}

const ModelSpec* HardwareCatalog::model_by_id(const std::string& hf_id) const {
  for (const auto& [key, m] : models) {
    if (lower(m.hf_id) == lower(hf_id)) return &m;
  }
  return nullptr;
}

const GpuSpec* HardwareCatalog::gpu_by_device(const std::string& device_name) const {
  const std::string device = lower(device_name);
  for (const auto& [key, g] : gpus) {
    std::string title = lower(g.title);
    // "GeForce RTX 4090 24GB" -> "geforce rtx 4090": the title without its memory.
    const auto space = title.rfind(' ');
    if (space != std::string::npos && title.find("gb", space) != std::string::npos) {
      title = title.substr(0, space);
    }
    if (device.find(title) != std::string::npos) return &g;
  }
  return nullptr;
}

}  // namespace infersim
