#include "calibration/kernel_step_cost.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/input_error.hpp"

namespace infersim {
namespace {

// The swept sizes a table measured (its CSV's size columns), in order.
std::vector<double> swept_sizes(const KernelTable& table) {
  std::vector<double> sizes;
  for (const auto& [key, curve] : table.rows) {
    sizes.insert(sizes.end(), curve.x.begin(), curve.x.end());
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

constexpr double kUs = 1e-6;

}  // namespace

std::string gemm_table_dtype(const Deployment& deployment, bool block_scales) {
  if (deployment.dtype == "fp8") return block_scales ? "fp8_block" : "fp8";
  return "bfloat16";
}

double elementwise_bytes_per_token(const ModelSpec& model, const Deployment& deployment) {
  const double tp = static_cast<double>(deployment.tensor_parallel);
  const double hidden = static_cast<double>(model.hidden);
  const double head_dim = static_cast<double>(model.head_dim);
  const double q = static_cast<double>(model.heads) / tp * head_dim;
  const double kv = std::max(1.0, static_cast<double>(model.kv_heads) / tp) * head_dim;
  // An expert model's activation runs inside its fused layer (the table's).
  const double inter = model.experts > 0 ? 0 : static_cast<double>(model.intermediate) / tp;
  const double elements = 2 * 4 * hidden + 2 * (q + kv) + 3 * inter + 4 * kv;
  return 2 * elements;
}

StepTable compose_step_table(const KernelTables& kernels, const GpuSpec& gpu,
                             const ModelSpec& model, const Deployment& deployment,
                             const std::string& gemm_dtype) {
  const double tp = static_cast<double>(deployment.tensor_parallel);
  const double layers = static_cast<double>(model.layers);
  const double hidden = static_cast<double>(model.hidden);
  const double head_dim = static_cast<double>(model.head_dim);
  const double heads = static_cast<double>(model.heads) / tp;
  const double kv_heads = std::max(1.0, static_cast<double>(model.kv_heads) / tp);
  const std::string kv_dtype = "bfloat16";
  const int hd = static_cast<int>(model.head_dim);

  const double elementwise_s_a_token =
      elementwise_bytes_per_token(model, deployment) / gpu.bandwidth_bps;
  // One layer's dense part at m tokens: q, k, v and o; the MLP, or the
  // experts' router; the element-wise kernels; the two all-reduces of tensor
  // parallelism.
  const auto layer_us = [&](double m) {
    double us = kernels.gemm_us(gemm_dtype, m, (heads + 2 * kv_heads) * head_dim, hidden);
    us += kernels.gemm_us(gemm_dtype, m, hidden, heads * head_dim);
    if (model.experts > 0) {
      us += kernels.gemm_us("bfloat16", m, static_cast<double>(model.experts), hidden);
    } else {
      const double inter = static_cast<double>(model.intermediate) / tp;
      us += kernels.gemm_us(gemm_dtype, m, 2 * inter, hidden);
      us += kernels.gemm_us(gemm_dtype, m, hidden, inter);
    }
    us += m * elementwise_s_a_token * 1e6;
    if (deployment.tensor_parallel > 1) {
      const auto reduce =
          kernels.allreduce_us(static_cast<int>(deployment.tensor_parallel), m * hidden);
      if (!reduce) {
        throw InputError(
            kernels.allreduce().path, 0, "num_gpus",
            "no all-reduce measured over " + std::to_string(deployment.tensor_parallel) + " GPUs");
      }
      us += 2 * *reduce;
    }
    return us;
  };
  const double vocab = static_cast<double>(model.vocab) / tp;
  const auto lm_head_us = [&](double sequences) {
    return kernels.gemm_us(gemm_dtype, sequences, vocab, hidden);
  };

  StepTable table;
  // Every step samples at least one sequence: the LM head at one is the
  // tokens' part, the sequences past one the decodes'.
  for (const double m : swept_sizes(kernels.gemm())) {
    table.tokens.at.push_back(m);
    table.tokens.s.push_back((layers * layer_us(m) + lm_head_us(1)) * kUs);
  }
  if (model.experts > 0) {
    for (const double m : swept_sizes(kernels.moe())) {
      const auto us = kernels.moe_us(
          gemm_dtype, static_cast<int>(model.hidden), static_cast<int>(model.moe_intermediate),
          static_cast<int>(model.active_experts), static_cast<int>(model.experts),
          static_cast<int>(deployment.tensor_parallel), 1, m);
      if (!us) {
        throw InputError(kernels.moe().path, 0, "",
                         "no expert layer measured of hidden " + std::to_string(model.hidden) +
                             ", inter " + std::to_string(model.moe_intermediate) + ", top-k " +
                             std::to_string(model.active_experts) + " of " +
                             std::to_string(model.experts) + " over " +
                             std::to_string(deployment.tensor_parallel) + " GPUs in " + gemm_dtype);
      }
      table.expert_tokens.at.push_back(m);
      table.expert_tokens.s.push_back(layers * *us * kUs);
    }
  }
  for (const double s : swept_sizes(kernels.context_attention())) {
    table.prefill_pairs.at.push_back(s * (s + 1) / 2);
    table.prefill_pairs.s.push_back(
        layers * kernels.context_attention_us(kv_dtype, hd, 0, heads, kv_heads, 1, s) * kUs);
  }
  const KernelTable& generation = kernels.generation_attention();
  table.decode.context = swept_sizes(generation);
  // The batch sizes measured at this head size (the table's last key).
  std::vector<double> batches;
  for (const auto& [key, curve] : generation.rows) {
    if (key.size() == 6 && key[0] == kv_dtype && key[1] == std::to_string(hd))
      batches.push_back(std::stod(key[5]));
  }
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  table.decode.batch = batches;
  for (const double b : batches) {
    const double extra_sequences = lm_head_us(b) - lm_head_us(1);
    for (const double context : table.decode.context) {
      const double attention =
          kernels.generation_attention_us(kv_dtype, hd, 0, heads, kv_heads, b, context);
      table.decode.s.push_back((layers * attention + std::max(0.0, extra_sequences)) * kUs);
    }
  }
  return table;
}

BatchingKnobs derive_table_knobs(const GpuSpec& gpu, const ModelSpec& model,
                                 const Deployment& deployment, const Efficiency& efficiency,
                                 const KernelTables& kernels, double overhead_s) {
  return with_step_table(
      derive_knobs(gpu, model, deployment, efficiency),
      compose_step_table(kernels, gpu, model, deployment, gemm_table_dtype(deployment)),
      overhead_s);
}

BatchingKnobs with_step_table(BatchingKnobs knobs, StepTable table, double overhead_s) {
  StepCoefficients c{};
  c[kStepBase] = overhead_s;
  set_coefficients(knobs, c);
  knobs.step_roofline = false;
  knobs.step_table = std::move(table);
  return knobs;
}

}  // namespace infersim
