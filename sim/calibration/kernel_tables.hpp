// A GPU's measured vLLM kernel tables (settings/kernels/<gpu>/, derived from
// AIConfigurator's measurements): what one call of each kernel takes at the
// shapes measured, and between them by interpolation, for a step cost
// composed of the kernels a step runs.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace infersim {

// One row of a table: a kernel's latency over its swept size (a GEMM's m, an
// attention's sequence length, ...), measured at some of the table's columns.
struct KernelCurve {
  std::vector<double> x;   // the measured columns' sizes, increasing
  std::vector<double> us;  // the latency at each, microseconds

  // Linear between the measured neighbours; below the first, the first (a
  // kernel takes no less for less work: launch and tiles bound it); above
  // the last, in proportion to the size. Throws std::logic_error if empty.
  double at(double size) const;
};

// A table: its key columns (the shape but the swept size) and a curve a row.
struct KernelTable {
  std::string path;
  std::vector<std::string> key_columns;
  std::string swept;  // the swept size's column name
  std::map<std::vector<std::string>, KernelCurve> rows;

  // Reads `path` (CSV: the key columns, then a column a swept size whose
  // header is that size; a cell the latency in microseconds, empty where
  // nothing was measured). Throws InputError naming the file, line and
  // column of anything malformed.
  static KernelTable read(const std::string& path, std::size_t key_count, const std::string& swept);
  // The row of `key`, or null.
  const KernelCurve* find(const std::vector<std::string>& key) const;
  // The latency at the shape whose first key columns are `prefix` and whose
  // remaining key columns (numbers) and swept size are `sizes`, in order:
  // linear between the measured values that bracket each (bilinear, ...,
  // in the key columns), in proportion beyond the largest, the curve's at()
  // for the swept size. Throws InputError when nothing was measured near.
  double latency_us(const std::vector<std::string>& prefix, std::span<const double> sizes) const;
  // The sorted distinct values (a number each) of the key column after
  // `prefix` among the rows whose first key columns are `prefix`.
  std::vector<double> values_after(const std::vector<std::string>& prefix) const;
};

// The kernels of one GPU.
class KernelTables {
 public:
  // Reads `folder` (settings/kernels/<gpu>): gemm.csv, context_attention.csv,
  // generation_attention.csv, moe.csv and allreduce.csv.
  static KernelTables load(const std::string& folder);

  // One GEMM of m tokens by an n x k weight in `dtype` (bfloat16, fp8,
  // fp8_block): bilinear between the measured n and k that bracket them
  // (exact for a latency linear in n, k and n*k, as a weights-bound GEMM's
  // is), each corner's curve at m; beyond the largest n or k in proportion.
  double gemm_us(const std::string& dtype, double m, double n, double k) const;
  // Prefill attention of `batch` sequences of `tokens` each, `heads` query
  // and `kv_heads` KV heads on this GPU, `head_dim`, the KV cache in
  // `kv_dtype` (bfloat16, fp8), `window` 0 or a sliding window.
  double context_attention_us(const std::string& kv_dtype, int head_dim, int window, double heads,
                              double kv_heads, double batch, double tokens) const;
  // One decode step's attention of `batch` sequences holding `kv_len` tokens
  // of KV each.
  double generation_attention_us(const std::string& kv_dtype, int head_dim, int window,
                                 double heads, double kv_heads, double batch, double kv_len) const;
  // vLLM's custom all-reduce of `elements` BF16 values over `gpus` GPUs,
  // under CUDA graphs (`graph`) or eager; nullopt where not measured.
  std::optional<double> allreduce_us(int gpus, double elements, bool graph = true) const;
  // The fused MoE layer of `tokens` tokens, its experts loaded evenly (the
  // flattest power law measured where no even load was);
  // nullopt for a shape not measured.
  std::optional<double> moe_us(const std::string& dtype, int hidden, int inter, int topk,
                               int experts, int tp, int ep, double tokens) const;

  const KernelTable& gemm() const { return gemm_; }
  const KernelTable& context_attention() const { return context_; }
  const KernelTable& generation_attention() const { return generation_; }
  const KernelTable& moe() const { return moe_; }
  const KernelTable& allreduce() const { return allreduce_; }

 private:
  double attention_us(const KernelTable& table, const std::string& kv_dtype, int head_dim,
                      int window, double heads, double kv_heads, double batch, double size) const;

  KernelTable gemm_, context_, generation_, moe_, allreduce_;
};

// How well the tables interpolate, told by holding measured points out: a
// point predicted from its neighbours on one axis with itself left out (so
// across twice the spacing the tables have: an upper bound, roughly, of
// interpolation between points kept).
struct HoldOutError {
  std::string table;  // "gemm"
  std::string axis;   // "m", "n", ...
  std::size_t points = 0;
  double median_pct = 0;  // of |predicted - measured| / measured
  double p90_pct = 0;
};
// Per table and axis: every interior point whose two neighbours on that axis
// were measured, predicted linearly between them; points under `floor_us`
// (launch-bound, where a relative error says little) left out.
std::vector<HoldOutError> hold_out_errors(const KernelTables& tables, double floor_us = 5);

}  // namespace infersim
