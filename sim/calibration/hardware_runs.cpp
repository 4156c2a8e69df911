#include "calibration/hardware_runs.hpp"

#include <cmath>
#include <cstdio>

#include "calibration/kernel_step_cost.hpp"
#include "calibration/measured_run_reader.hpp"
#include "core/input_error.hpp"
#include "scenario/scenario.hpp"
#include "scenario/settings.hpp"

namespace infersim {

HardwareRunSource load_hardware_run(const std::filesystem::path& dir,
                                    const HardwareCatalog& catalog,
                                    const std::optional<std::string>& gpu,
                                    const std::optional<std::string>& workload, bool roofline) {
  const MeasuredRun run = read_measured_run(dir);
  const std::string meta = (dir / "meta.json").string();
  HardwareRunSource out;
  out.name = dir.filename().string();
  if (out.name.empty()) out.name = dir.parent_path().filename().string();
  if (!run.engine) throw InputError(meta, 0, "", "missing: the run's model and GPU are read there");
  const MeasuredEngine& m = *run.engine;

  // The model and the GPU.
  if (m.model.empty()) throw InputError(meta, 0, "model", "missing");
  const ModelSpec* model = catalog.model_by_id(m.model);
  if (model == nullptr) {
    throw InputError(meta, 0, "model",
                     "'" + m.model +
                         "' is not in settings/hardware/models.json (add its "
                         "config.json figures there)");
  }
  out.model = *model;
  const GpuSpec* found = m.device_name ? catalog.gpu_by_device(*m.device_name) : nullptr;
  if (found == nullptr && m.device_name) {
    throw InputError(meta, 0, "hardware.device_name",
                     "'" + *m.device_name + "' is not in settings/hardware/gpus.json");
  }
  if (found == nullptr) {
    if (!gpu) {
      throw InputError("", 0, "--gpu",
                       "missing: " + meta +
                           " does not record the GPU; name it (e.g. --gpu "
                           "rtx-pro-6000)");
    }
    found = &catalog.gpu(*gpu, "--gpu");
  }
  out.gpu = *found;

  // The workload beside the run.
  std::filesystem::path trace_path;
  if (workload) {
    trace_path = *workload;
  } else if (m.dataset_path) {
    trace_path =
        dir.parent_path() / "workloads" / std::filesystem::path(*m.dataset_path).filename();
  } else {
    throw InputError(meta, 0, "dataset_path", "missing: give the workload with --trace");
  }
  Settings settings;
  settings.server_kind = "batching";
  settings.trace_path = trace_path.string();
  const LoadedTrace loaded = load_trace(settings);
  out.source = load_measured_source(dir.string(), loaded.trace, loaded.sha256, BatchingKnobs{},
                                    GivenKnobs{});

  // The deployment as the run had it.
  BatchingKnobs& k = out.knobs;
  k = out.source.engine.knobs;
  Deployment& d = out.deployment;
  d.tensor_parallel = m.tensor_parallel_size.value_or(1);
  d.data_parallel = k.lockstep ? k.replicas : 1;
  d.max_num_seqs = k.max_num_seqs;
  d.max_num_batched_tokens = k.max_num_batched_tokens;
  d.block_tokens = k.block_tokens;
  d.gpu_memory_utilization = m.gpu_memory_utilization.value_or(0.9);
  out.kv_blocks_recorded = out.source.engine.kv_blocks_known;
  out.kv_blocks_derived = kv_blocks_of(out.gpu, out.model, d);
  if (!out.kv_blocks_recorded) {
    k.kv_blocks = out.kv_blocks_derived;
    if (!m.max_model_len)
      k.max_model_len = std::min(out.model.max_position, k.kv_blocks * k.block_tokens);
    out.source.engine.kv_blocks_known = true;
  }
  k.step_roofline = roofline;
  k.moe_experts = out.model.experts;
  k.moe_active_experts = out.model.active_experts;
  out.map = cost_map(out.gpu, out.model, d);
  set_coefficients(k, out.map.at(to_vector(Efficiency{})));
  out.source.engine.knobs = k;
  return out;
}

void derive_at_run(EngineSetup& engine, const GpuSpec& gpu, const ModelSpec& model,
                   const HardwareCatalog& catalog, const GivenKnobs& given) {
  BatchingKnobs& k = engine.knobs;
  Deployment d;
  d.tensor_parallel = engine.tensor_parallel;
  d.data_parallel = k.lockstep ? k.replicas : 1;
  d.max_num_seqs = k.max_num_seqs;
  d.max_num_batched_tokens = k.max_num_batched_tokens;
  d.block_tokens = k.block_tokens;
  d.gpu_memory_utilization = engine.gpu_memory_utilization;
  const BatchingKnobs derived = derive_knobs(gpu, model, d, catalog.efficiency);
  const std::string at = "settings/hardware's " + gpu.name + " and " + model.name +
                         " at the run's TP " + std::to_string(d.tensor_parallel) +
                         (d.data_parallel > 1 ? ", DP " + std::to_string(d.data_parallel) : "") +
                         ", " + std::to_string(d.max_num_seqs) + " sequences and " +
                         std::to_string(d.max_num_batched_tokens) + " tokens";
  bool costs_flagged = false;
  for (const char* key : kStepTermKeys)
    costs_flagged = costs_flagged || given.flags.count(std::string("batching.") + key) > 0;
  if (!costs_flagged) {
    set_coefficients(k, coefficients_of(derived));
    k.step_roofline = derived.step_roofline;
    k.moe_experts = derived.moe_experts;
    k.moe_active_experts = derived.moe_active_experts;
    k.gpu_idle_w = derived.gpu_idle_w;
    k.gpu_max_w = derived.gpu_max_w;
    engine.facts.push_back("step costs and power = " + at + " (efficiency.json's factors)");
  }
  if (!engine.kv_blocks_recorded && !given.flags.count("batching.kv_blocks")) {
    // The settings' count, said before, gives way.
    std::erase_if(engine.facts,
                  [](const std::string& f) { return f.rfind("kv_blocks = ", 0) == 0; });
    k.kv_blocks = derived.kv_blocks;
    engine.kv_blocks_known = true;
    engine.facts.push_back("kv_blocks = " + std::to_string(k.kv_blocks) + " (" + at +
                           ", by vLLM's memory accounting)");
    if (k.max_model_len && (*k.max_model_len - 1) / k.block_tokens >= k.kv_blocks) {
      k.max_model_len = std::min(model.max_position, k.kv_blocks * k.block_tokens);
    }
  }
}

std::vector<HardwareRun> hardware_runs(const std::vector<HardwareRunSource>& runs) {
  std::vector<HardwareRun> out;
  for (const HardwareRunSource& r : runs)
    out.push_back({r.name, &r.source.replay, r.knobs, r.map});
  return out;
}

MeasuredReport predict_run(const HardwareRunSource& run, const Efficiency& factors) {
  BatchingKnobs knobs = run.knobs;
  set_coefficients(knobs, run.map.at(to_vector(factors)));
  knobs.step_roofline = factors.roofline;
  return compare_replay(run.source.replay, replay_measured(run.source.replay, knobs),
                        run.source.engine);
}

namespace {

// The run against section 5's coefficients fitted on itself (calibrate's fit).
MeasuredReport in_sample_fit(const HardwareRunSource& run, const BatchingFitOptions& options) {
  const BatchingFit own = fit_batching(run.source.replay, run.source.engine, options);
  return compare_replay(run.source.replay, replay_measured(run.source.replay, own.knobs),
                        run.source.engine);
}

}  // namespace

std::vector<LeaveOneOut> leave_one_out(const std::vector<HardwareRunSource>& runs,
                                       const Efficiency& preset_factors,
                                       const BatchingFitOptions& options) {
  std::vector<LeaveOneOut> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::vector<HardwareRun> fitted = hardware_runs(runs);
    fitted.erase(fitted.begin() + static_cast<std::ptrdiff_t>(i));
    LeaveOneOut row;
    row.run = runs[i].name;
    row.factors = fit_efficiency(fitted, options).factors;
    row.factors.roofline = runs[i].knobs.step_roofline;
    row.predicted = predict_run(runs[i], row.factors);
    row.preset = predict_run(runs[i], preset_factors);
    row.in_sample = in_sample_fit(runs[i], options);
    out.push_back(std::move(row));
  }
  return out;
}

BatchingKnobs table_knobs(const HardwareRunSource& run, double overhead_s) {
  return with_step_table(run.knobs, run.table, overhead_s);
}

MeasuredReport predict_run_tables(const HardwareRunSource& run, double overhead_s) {
  return compare_replay(run.source.replay,
                        replay_measured(run.source.replay, table_knobs(run, overhead_s)),
                        run.source.engine);
}

OverheadFit fit_step_overhead(const std::vector<const HardwareRunSource*>& runs) {
  OverheadFit fit;
  const auto loss_at = [&](double overhead_s) {
    double loss = 0;
    for (const HardwareRunSource* run : runs) {
      const Replay result = replay_measured(run->source.replay, table_knobs(*run, overhead_s));
      loss += replay_loss(run->source.replay, result).total;
      ++fit.replays;
    }
    return loss;
  };
  // The loss is unimodal in the overhead over the range a GPU's step has:
  // every step longer, the replay's requests later, one way.
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double lo = 0, hi = 0.02;
  double a = hi - golden * (hi - lo), b = lo + golden * (hi - lo);
  double fa = loss_at(a), fb = loss_at(b);
  while (hi - lo > 1e-5) {
    if (fa <= fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - golden * (hi - lo);
      fa = loss_at(a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + golden * (hi - lo);
      fb = loss_at(b);
    }
  }
  fit.overhead_s = fa <= fb ? a : b;
  fit.loss = std::min(fa, fb);
  return fit;
}

std::vector<LeaveOneOut> leave_one_out_tables(const std::vector<HardwareRunSource>& runs,
                                              double preset_overhead_s,
                                              const BatchingFitOptions& options) {
  std::vector<LeaveOneOut> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::vector<const HardwareRunSource*> others;
    for (std::size_t j = 0; j < runs.size(); ++j) {
      if (j != i) others.push_back(&runs[j]);
    }
    LeaveOneOut row;
    row.run = runs[i].name;
    row.factors.overhead_s = fit_step_overhead(others).overhead_s;
    row.predicted = predict_run_tables(runs[i], row.factors.overhead_s);
    row.preset = predict_run_tables(runs[i], preset_overhead_s);
    row.in_sample = in_sample_fit(runs[i], options);
    out.push_back(std::move(row));
  }
  return out;
}

namespace {

std::string cell(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

const MeasuredTableRow* row_of(const MeasuredReport& r, const std::string& metric,
                               const std::string& statistic) {
  for (const MeasuredTableRow& row : r.table) {
    if (row.metric == metric && row.statistic == statistic) return &row;
  }
  return nullptr;
}

}  // namespace

std::string leave_one_out_table(const std::vector<LeaveOneOut>& rows,
                                const std::string& fitted_on_every_run) {
  std::string out = "| run | figure | vLLM (ms) | left out: fitted on the others | " +
                    fitted_on_every_run +
                    " | in-sample fit | LLMServingSim |\n| --- | --- | ---: | ---: | ---: | ---: "
                    "| ---: |\n";
  double sums[4] = {0, 0, 0, 0};
  int counts[4] = {0, 0, 0, 0};
  for (const LeaveOneOut& r : rows) {
    for (const char* metric : {"TTFT", "TPOT", "Latency"}) {
      for (const char* statistic : {"Mean", "Median", "P90", "P99"}) {
        const MeasuredTableRow* p = row_of(r.predicted, metric, statistic);
        const MeasuredTableRow* s = row_of(r.preset, metric, statistic);
        const MeasuredTableRow* in = row_of(r.in_sample, metric, statistic);
        if (p == nullptr || s == nullptr || in == nullptr) continue;
        const std::optional<double> other = p->other_diff_pct();
        const double errors[4] = {p->diff_pct(), s->diff_pct(), in->diff_pct(),
                                  other ? *other : 0.0};
        for (int w = 0; w < 4; ++w) {
          if (w == 3 && !other) continue;
          sums[w] += std::fabs(errors[w]);
          ++counts[w];
        }
        out += "| " + r.run + " | " + metric + " " + statistic + " | " +
               cell("%.1f", p->measured_ms) + " | " + cell("%+.1f %%", p->diff_pct()) + " | " +
               cell("%+.1f %%", s->diff_pct()) + " | " + cell("%+.1f %%", in->diff_pct()) + " | " +
               (other ? cell("%+.1f %%", *other) : std::string("—")) + " |\n";
      }
    }
  }
  out += "| every run | mean \\|error\\| | |";
  for (int w = 0; w < 4; ++w)
    out += counts[w] > 0 ? " " + cell("%.1f %%", sums[w] / counts[w]) + " |" : " — |";
  return out + "\n";
}

namespace {

// The sum of |error| in percent over a report's mean, median, p90 and p99 of
// each figure, and how many there were.
void add_errors(const MeasuredReport& report, std::map<std::string, double>& sums,
                std::map<std::string, int>& counts) {
  for (const auto& [key, metric] : {std::pair<const char*, const char*>{"ttft", "TTFT"},
                                    {"tpot", "TPOT"},
                                    {"latency", "Latency"}}) {
    for (const char* statistic : {"Mean", "Median", "P90", "P99"}) {
      if (const MeasuredTableRow* row = row_of(report, metric, statistic)) {
        sums[key] += std::fabs(row->diff_pct());
        ++counts[key];
      }
    }
  }
}

std::map<std::string, double> means_of(const std::map<std::string, double>& sums,
                                       const std::map<std::string, int>& counts) {
  std::map<std::string, double> out;
  for (const auto& [key, sum] : sums)
    out[key] = std::round(10 * sum / counts.at(key)) / 10;
  return out;
}

}  // namespace

std::map<std::string, double> expected_error_pct(const std::vector<LeaveOneOut>& rows) {
  std::map<std::string, double> sums;
  std::map<std::string, int> counts;
  for (const LeaveOneOut& r : rows)
    add_errors(r.predicted, sums, counts);
  return means_of(sums, counts);
}

std::map<std::string, double> error_pct_of(const MeasuredReport& report) {
  std::map<std::string, double> sums;
  std::map<std::string, int> counts;
  add_errors(report, sums, counts);
  return means_of(sums, counts);
}

}  // namespace infersim
