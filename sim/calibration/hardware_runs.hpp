// Measured runs read as points of the hardware model (calibration/hardware_model):
// each run's GPU (meta.json's device name, else the one given), model
// (meta.json's Hugging Face id), deployment (its tensor and data
// parallelism and engine limits) and workload (meta.json's dataset_path,
// looked for beside the run's folder), so that efficiency factors can be
// fitted across runs and a run predicted from factors fitted on the others.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/batching_calibration.hpp"
#include "calibration/hardware_model.hpp"
#include "calibration/measured_replay.hpp"
#include "calibration/measured_report.hpp"
#include "model/batching_knobs.hpp"

namespace infersim {

struct HardwareRunSource {
  std::string name;  // the run folder's name
  MeasuredSource source;
  GpuSpec gpu;
  ModelSpec model;
  Deployment deployment;
  BatchingKnobs knobs;  // the engine's, with the model's experts, the form and the KV blocks
  CostMap map;
  // Section 5c's table composed from the GPU's kernels (calibration/
  // kernel_step_cost), when the run is to be predicted from them; empty else.
  StepTable table;
  bool kv_blocks_recorded = false;     // meta.json gave num_gpu_blocks
  std::int64_t kv_blocks_derived = 0;  // the hardware model's count
};

// Reads `dir` and its workload (`workload` when given, else meta.json's
// dataset_path's file name in the folder `workloads` beside the run's). The
// GPU is meta.json's hardware.device_name when recorded, else `gpu` (an
// InputError naming --gpu when neither). `roofline` picks the step cost's
// form. Throws InputError naming meta.json for a model the catalog does not
// hold.
HardwareRunSource load_hardware_run(const std::filesystem::path& dir,
                                    const HardwareCatalog& catalog,
                                    const std::optional<std::string>& gpu,
                                    const std::optional<std::string>& workload, bool roofline);

// A preset derived from the catalog (its meta names the GPU and the model)
// used on a measured run: its step costs, power and, unless the run recorded
// them or a flag gives them, KV blocks derived again at the run's deployment
// (its tensor and data parallelism, limits, memory share), each said in
// `engine.facts`. Costs or blocks a flag gives are kept.
void derive_at_run(EngineSetup& engine, const GpuSpec& gpu, const ModelSpec& model,
                   const HardwareCatalog& catalog, const GivenKnobs& given);

// The runs as fit_efficiency takes them.
std::vector<HardwareRun> hardware_runs(const std::vector<HardwareRunSource>& runs);

// A run replayed with the knobs the factors give it, against its measured
// figures.
MeasuredReport predict_run(const HardwareRunSource& run, const Efficiency& factors);

// Leave-one-run-out: for each run, the factors fitted on the others and its
// figures predicted from them; with the catalog's factors (the presets'),
// and the run's own in-sample fit of section 5's coefficients beside them.
struct LeaveOneOut {
  std::string run;
  Efficiency factors;        // fitted on the other runs
  MeasuredReport predicted;  // from them
  MeasuredReport preset;     // from the catalog's factors
  MeasuredReport in_sample;  // calibrate's fit on the run itself
};
std::vector<LeaveOneOut> leave_one_out(const std::vector<HardwareRunSource>& runs,
                                       const Efficiency& preset_factors,
                                       const BatchingFitOptions& options);

// The run's knobs with its step table (section 5c) and c0 = overhead_s
// (with_step_table).
BatchingKnobs table_knobs(const HardwareRunSource& run, double overhead_s);
MeasuredReport predict_run_tables(const HardwareRunSource& run, double overhead_s);

// The fixed part a step that, beside the runs' tables, minimizes the sum of
// their replays' losses: golden-section search over [0, 20 ms] to 10 us.
struct OverheadFit {
  double overhead_s = 0;
  double loss = 0;
  std::size_t replays = 0;
};
OverheadFit fit_step_overhead(const std::vector<const HardwareRunSource*>& runs);

// Leave-one-run-out with the tables: each run predicted with the overhead
// fitted on the others (its `factors.overhead_s`), with `preset_overhead_s`
// (the presets', fitted on every run) and its own in-sample fit of section
// 5's coefficients beside them.
std::vector<LeaveOneOut> leave_one_out_tables(const std::vector<HardwareRunSource>& runs,
                                              double preset_overhead_s,
                                              const BatchingFitOptions& options);

// The leave-one-out table: a row a run and figure (TTFT, TPOT and latency:
// mean, median, p90, p99), the measured value and each way's error in percent,
// LLMServingSim's beside them when the run publishes it.
// `fitted_on_every_run` heads the column of `preset`.
std::string leave_one_out_table(
    const std::vector<LeaveOneOut>& rows,
    const std::string& fitted_on_every_run = "presets' factors (fitted on every run: in sample)");
// The left-out predictions' mean |error| in percent over the runs and their
// mean, median, p90 and p99, for "ttft", "tpot" and "latency".
std::map<std::string, double> expected_error_pct(const std::vector<LeaveOneOut>& rows);
// One report's mean |error| in percent over its mean, median, p90 and p99,
// for "ttft", "tpot" and "latency".
std::map<std::string, double> error_pct_of(const MeasuredReport& report);

}  // namespace infersim
