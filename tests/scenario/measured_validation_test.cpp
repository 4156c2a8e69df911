// The batching server against three real vLLM 0.19.0 runs (trace/measured/,
// fetched by trace/measured/fetch), each calibrated on itself and replayed:
// every figure of the table within the bound the model reaches (the issue's
// targets are 2 % for a mean and 5 % for a percentile, and 2 requests a tick
// of running and waiting, on the dense runs; on the MoE run, at least as
// close as LLMServingSim on most figures). A change of the model that moves a
// figure past its bound fails here; the bounds are the figures reached,
// rounded up, never looser than a target the run meets.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/batching_calibration.hpp"
#include "calibration/hardware_model.hpp"
#include "calibration/hardware_runs.hpp"
#include "calibration/measured_replay.hpp"
#include "core/sha256.hpp"
#include "test_support.hpp"
#include "trace/trace_reader.hpp"

namespace infersim {
namespace {

// |diff %| bounds in the table's order: TTFT, TPOT, latency; each mean,
// median, p90, p95, p99.
using Bounds = std::array<double, 15>;

struct Expected {
  const char* run;
  const char* workload;
  Bounds bounds;
  double running;         // mean |running difference| a tick, requests
  double waiting;         // the same for waiting
  int closer_than_other;  // figures at least as close as LLMServingSim's, at least
};

MeasuredReport calibrated(const Expected& x, BatchingFit* fit_out = nullptr,
                          const BatchingKnobs& base = {}, double figures_weight = 0) {
  const std::string workload_path = test::measured_path(std::string("workloads/") + x.workload);
  TraceSource source;
  source.path = workload_path;
  const Trace workload = read_trace(source);
  const MeasuredRun run = read_measured_run(test::measured_path(x.run));
  MeasuredReplay replay = prepare_replay(run, workload, sha256_file_hex(workload_path));
  replay.figures_weight = figures_weight;
  const EngineSetup engine = engine_setup(run, base, {});
  BatchingFitOptions options;
  options.threads = 2;
  const BatchingFit fit = fit_batching(replay, engine, options);
  if (fit_out) *fit_out = fit;
  return compare_replay(replay, replay_measured(replay, fit.knobs), engine);
}

void check(const Expected& x, const BatchingKnobs& base = {}, double figures_weight = 0) {
  const MeasuredReport report = calibrated(x, nullptr, base, figures_weight);
  ASSERT_EQ(report.table.size(), 15u);
  int closer = 0;
  for (std::size_t i = 0; i < report.table.size(); ++i) {
    const MeasuredTableRow& row = report.table[i];
    EXPECT_LE(std::abs(row.diff_pct()), x.bounds[i])
        << x.run << ": " << row.metric << " " << row.statistic << " measured " << row.measured_ms
        << " ms, infersim " << row.simulated_ms << " ms";
    ASSERT_TRUE(row.other_diff_pct()) << "llmservingsim_vs_vllm.txt was read";
    if (std::abs(row.diff_pct()) <= std::abs(*row.other_diff_pct())) ++closer;
  }
  EXPECT_GE(closer, x.closer_than_other) << x.run;
  ASSERT_TRUE(report.running_mean_abs_diff);
  ASSERT_TRUE(report.waiting_mean_abs_diff);
  EXPECT_LE(*report.running_mean_abs_diff, x.running) << x.run;
  EXPECT_LE(*report.waiting_mean_abs_diff, x.waiting) << x.run;
}

// The dense runs: every figure within 0.3 to 1.7 % (targets 2 % and 5 %),
// running and waiting within a request a tick (target 2), closer than
// LLMServingSim on 14 and 15 of the 15 figures. The MoE run: TTFT within
// 2.5 % but its median (+9.5 %: a request served at once waits two steps and
// a prefill, and the steps there are shorter than the fitted fixed cost),
// TPOT's tail and the latency p99 4 to 6 % off (the expert cost grows with
// the batch less than linearly, which the linear step misses), running 4.2
// requests a tick off in the drain; closer than LLMServingSim on 10 of 15.
TEST(MeasuredValidation, Llama31_8B) {
  check({"RTXPRO6000-Llama-3.1-8B",
         "sharegpt-llama-3.1-8b-300-sps10.jsonl",
         {0.3, 1.3, 0.6, 0.3, 0.5, 0.4, 0.7, 0.5, 0.3, 0.3, 0.4, 0.3, 0.3, 0.4, 0.6},
         0.5,
         0.3,
         14});
}

TEST(MeasuredValidation, Qwen3_32B) {
  check({"RTXPRO6000-Qwen3-32B",
         "sharegpt-qwen3-32b-300-sps10.jsonl",
         {0.5, 1.7, 0.3, 0.3, 0.3, 0.3, 0.5, 0.7, 1.2, 0.6, 0.4, 0.4, 0.2, 0.3, 0.4},
         0.4,
         0.9,
         15});
}

TEST(MeasuredValidation, Qwen3_30B_A3B) {
  check({"RTXPRO6000-Qwen3-30B-A3B-Instruct-2507",
         "sharegpt-qwen3-30b-a3b-300-sps10.jsonl",
         {2.0, 9.7, 1.6, 1.4, 2.5, 0.6, 0.6, 4.4, 4.8, 5.3, 0.9, 1.0, 0.7, 0.7, 6.4},
         4.3,
         0.6,
         10});
}

// The MoE run replayed with its arrivals taken at the engine's turns
// (replay_turns, BATCHING.md section 10b), as examples/validate_vllm's "What
// is left" gives it: every figure within its target but TTFT p90 (-7.2 %),
// running 0.75 requests a tick off.
TEST(MeasuredValidation, Qwen3_30B_A3BAtTheEnginesTurns) {
  BatchingKnobs base;
  base.replay_turns = true;
  check({"RTXPRO6000-Qwen3-30B-A3B-Instruct-2507",
         "sharegpt-qwen3-30b-a3b-300-sps10.jsonl",
         {1.7, 3.1, 7.3, 3.7, 2.9, 0.2, 0.1, 0.4, 0.3, 0.3, 0.2, 0.2, 0.1, 0.2, 0.3},
         0.8,
         0.2,
         10},
        base);
}

// At the engine's turns with the figures term (calibrate --figures-weight
// 1), as examples/validate_vllm's "What is left" gives it: every figure
// within item 5's targets (2 % a mean, 5 % a median, p90 or p99), TTFT
// median +4.4 % the farthest; the requests one by one fit less well, and
// running is 2.1 requests a tick off.
TEST(MeasuredValidation, Qwen3_30B_A3BAtTheEnginesTurnsWithTheFiguresTerm) {
  BatchingKnobs base;
  base.replay_turns = true;
  check({"RTXPRO6000-Qwen3-30B-A3B-Instruct-2507",
         "sharegpt-qwen3-30b-a3b-300-sps10.jsonl",
         {1.1, 4.5, 3.3, 2.0, 0.8, 1.1, 0.3, 2.7, 2.8, 2.7, 0.9, 1.9, 0.6, 0.7, 1.3},
         2.1,
         0.4,
         12},
        base, 1);
}

// The presets' validation (settings/presets/README.md, "The factors and how
// well they predict"): each run predicted from efficiency factors fitted on
// the other two. The README's table is these figures as measured; a change
// of the hardware model or the fit that moves one by more than its rounding
// fails here, and the README is to be measured again.
namespace hardware {

const MeasuredTableRow& row(const MeasuredReport& r, const char* metric, const char* statistic) {
  for (const MeasuredTableRow& x : r.table) {
    if (x.metric == metric && x.statistic == statistic) return x;
  }
  throw std::logic_error("no such row");
}

TEST(PresetValidation, LeavingOneRunOutGivesTheReadmesTable) {
  const HardwareCatalog catalog =
      load_hardware((test::source_dir() / "settings" / "hardware").string());
  std::vector<HardwareRunSource> runs;
  for (const char* name : {"RTXPRO6000-Llama-3.1-8B", "RTXPRO6000-Qwen3-32B",
                           "RTXPRO6000-Qwen3-30B-A3B-Instruct-2507"}) {
    runs.push_back(load_hardware_run(test::measured_path(name), catalog, "rtx-pro-6000",
                                     std::nullopt, catalog.efficiency.roofline));
  }
  BatchingFitOptions options;
  options.threads = 2;
  const std::vector<LeaveOneOut> rows = leave_one_out(runs, catalog.efficiency, options);
  ASSERT_EQ(rows.size(), 3u);
  const struct {
    std::size_t run;
    const char* metric;
    const char* statistic;
    double left_out, preset;  // diff %, as the README gives them
  } figures[] = {
      {0, "TTFT", "Mean", 28.9, 0.4},    {0, "TPOT", "Mean", 10.7, -0.3},
      {0, "Latency", "P99", 15.2, -0.3}, {1, "TTFT", "Mean", -1.1, -0.4},
      {1, "TPOT", "P99", -1.5, -1.0},    {1, "Latency", "Mean", -0.2, 0.3},
      {2, "TTFT", "Median", 19.5, 9.3},  {2, "TPOT", "Mean", 0.6, 0.3},
      {2, "Latency", "P99", 0.7, 0.6},
  };
  for (const auto& f : figures) {
    SCOPED_TRACE(rows[f.run].run + " " + f.metric + " " + f.statistic);
    EXPECT_NEAR(row(rows[f.run].predicted, f.metric, f.statistic).diff_pct(), f.left_out, 0.051);
    EXPECT_NEAR(row(rows[f.run].preset, f.metric, f.statistic).diff_pct(), f.preset, 0.051);
  }
  EXPECT_NE(leave_one_out_table(rows).find("| every run | mean \\|error\\| | | 8.4 % | 1.1 % |"),
            std::string::npos);
}

// The presets of the measured pairs used on their own runs as a user would,
// with no flag but --preset, --trace and --measured: the run's meta.json
// sets the engine's limits (128 sequences, 2048 tokens, Qwen3-32B's two
// GPUs), the preset the rest; every mean within 2 % and every percentile
// within 5 % of vLLM's.
TEST(PresetValidation, APresetOnItsOwnRunWithNoOtherFlag) {
  const struct {
    const char* preset;
    const char* run;
    const char* workload;
  } pairs[] = {
      {"rtx-pro-6000-llama-3.1-8b", "RTXPRO6000-Llama-3.1-8B", "sharegpt-llama-3.1-8b-300-sps10"},
      {"rtx-pro-6000-qwen3-32b", "RTXPRO6000-Qwen3-32B", "sharegpt-qwen3-32b-300-sps10"},
  };
  for (const auto& p : pairs) {
    SCOPED_TRACE(p.preset);
    const test::CliResult r = test::run_cli(
        {"run", "--preset", p.preset, "--trace",
         test::measured_path(std::string("workloads/") + p.workload + ".jsonl"), "--measured",
         test::measured_path(p.run), "--output", test::fresh_dir("preset_run").string(), "--force",
         "--plots", "none", "--per-request", "none"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("max_num_seqs = 128 (meta.json; the settings' 1024 set aside)"),
              std::string::npos);
    int rows = 0;
    for (const std::string& line : test::lines_of(r.out)) {
      char metric[16], statistic[16];
      double measured = 0, simulated = 0, diff = 0;
      if (std::sscanf(line.c_str(), "%15s %15s %lf %lf %lf%%", metric, statistic, &measured,
                      &simulated, &diff) != 5 ||
          (std::string(metric) != "TTFT" && std::string(metric) != "TPOT" &&
           std::string(metric) != "Latency")) {
        continue;
      }
      ++rows;
      EXPECT_LE(std::fabs(diff), std::string(statistic) == "Mean" ? 2.0 : 5.0) << line;
    }
    EXPECT_EQ(rows, 15);
  }
}

}  // namespace hardware

}  // namespace
}  // namespace infersim
