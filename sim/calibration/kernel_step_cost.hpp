// A step table (BATCHING.md section 5c) composed from a GPU's measured
// kernels, the way Vidur and AIConfigurator compose a step: for T tokens, each
// layer's GEMMs at the model's shapes on one GPU of the tensor-parallel group
// and its two all-reduces; the experts' fused layer for T routed tokens; the
// prefill attention of a step's Q pairs, as one prompt of s tokens whose
// s (s + 1) / 2 pairs they are; the decode attention of D sequences at A / D
// tokens of context each, with the LM head over those D. What the tables do
// not hold (scheduling, sampling, launches) is the step's fixed part,
// section 5's c0, which the presets take from the measured runs.
#pragma once

#include <string>

#include "calibration/hardware_model.hpp"
#include "calibration/kernel_tables.hpp"
#include "model/step_table.hpp"

namespace infersim {

// The kernel tables' number format of the deployment's GEMMs: "bfloat16" for
// bf16; for fp8, "fp8" (per-tensor scales, vLLM's default for FP8 checkpoints
// without block scales) or "fp8_block" when `block_scales`.
std::string gemm_table_dtype(const Deployment& deployment, bool block_scales = false);

// The table for this model on one replica of the deployment (its tensor
// parallelism; experts split across the tensor-parallel GPUs, as vLLM does
// without expert parallelism), the KV cache in BF16. Throws InputError naming
// the kernel table and shape when the tables hold nothing near a shape the
// model needs (an all-reduce over more GPUs than measured, an expert layer
// of a shape not measured).
StepTable compose_step_table(const KernelTables& kernels, const GpuSpec& gpu,
                             const ModelSpec& model, const Deployment& deployment,
                             const std::string& gemm_dtype);

// The bytes one token's element-wise kernels move in one layer on one GPU of
// the tensor-parallel group, BF16: two fused residual adds and RMS norms
// (x and the residual read, both written: 4 hidden each), the rotary
// embedding (q and k read and written), SiLU and multiply (gate and up read,
// the product written) and the KV cache's write (k and v read and written).
double elementwise_bytes_per_token(const ModelSpec& model, const Deployment& deployment);

// A preset's knobs with section 5c's table: derive_knobs's limits, KV blocks,
// power and scheduling, the table composed from `kernels`, c0 the engine's
// fixed part a step (`overhead_s`), every other coefficient 0.
BatchingKnobs derive_table_knobs(const GpuSpec& gpu, const ModelSpec& model,
                                 const Deployment& deployment, const Efficiency& efficiency,
                                 const KernelTables& kernels, double overhead_s);

// `knobs` with section 5c's `table` and c0 = overhead_s, every other
// coefficient 0 and the sum form: the kernels' part composed, the engine's own
// fixed part a step the one term left.
BatchingKnobs with_step_table(BatchingKnobs knobs, StepTable table, double overhead_s);

}  // namespace infersim
