// A replay set against the real run it reproduces, as the reader sees it: the
// table of TTFT, TPOT and latency statistics in the layout of LLMServingSim's
// llmservingsim_vs_vllm.txt (measured, infersim, diff %, and that simulator's
// figure when the run folder holds it), measured.csv (each request's measured
// and simulated instants), measured_timeseries.csv (running, waiting and KV
// use tick by tick, both sides), the gnuplot scripts that draw them and the
// replay's part of the run folder and its page. measured_replay fills a
// MeasuredReport; this file only formats it.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

#include "report/plots.hpp"
#include "report/run_writer.hpp"

namespace infersim {

// One line of the table, in milliseconds.
struct MeasuredTableRow {
  std::string metric;     // TTFT, TPOT, Latency
  std::string statistic;  // Mean, Median, P90, P95, P99
  double measured_ms = 0;
  double simulated_ms = 0;
  std::optional<double> other_ms;  // the other simulator's figure for the same run
  // (simulated - measured) / measured in percent.
  double diff_pct() const;
  std::optional<double> other_diff_pct() const;
};

// What was measured of one replayed request (seconds; instants from the
// replay's origin, none for a measurement file).
struct MeasuredFigures {
  std::uint64_t request = 0;  // bench-i: the workload's line i; else the order in the file
  std::uint32_t input_tokens = 0;
  std::uint32_t output_tokens = 0;
  double ttft_s = 0;
  std::optional<double> tpot_s;  // two tokens or more
  double latency_s = 0;
  std::optional<double> start_s;  // scheduled_ts
  std::optional<double> first_token_s;
  std::optional<double> finish_s;
};

// A request of the run, measured and replayed. Instants are seconds from the
// replay's origin (the engine's first arrival, or the trace's first).
struct MeasuredRequestRow {
  MeasuredFigures measured;  // its request and tokens too
  double arrival_s = 0;
  bool rejected = false;  // by the replay (longer than max_model_len)
  std::uint32_t replica = 0;
  double simulated_start_s = 0;
  double simulated_first_token_s = 0;
  double simulated_finish_s = 0;
  double simulated_ttft_s = 0;
  std::optional<double> simulated_tpot_s;
  double simulated_latency_s = 0;
  std::uint32_t preemptions = 0;
};

// One metric's figures over the requests the replay served, in replay order,
// in seconds: TTFT, TPOT (of the requests with one on both sides) or latency.
struct MetricSamples {
  const char* metric;  // TTFT, TPOT, Latency
  std::vector<double> measured;
  std::vector<double> simulated;
};
std::array<MetricSamples, 3> served_samples(const std::vector<MeasuredRequestRow>& requests);

// A tick of the run's timeseries.csv against the replay's state at the same
// instant (the tick's end on the replay's clock).
struct MeasuredTickRow {
  double t_s = 0;       // as timeseries.csv gives it
  double replay_s = 0;  // the same instant on the replay's clock
  double measured_running = 0;
  double measured_waiting = 0;
  std::optional<double> measured_kv_pct;
  double simulated_running = 0;
  double simulated_waiting = 0;
  double simulated_kv_pct = 0;
};

// The loss the fit minimises (calibration/batching_calibration), with its terms:
//   loss = mean over requests of ((ttft_sim - ttft) / mean ttft)^2
//        + mean over requests of two tokens or more of ((tpot_sim - tpot) / tpot)^2,
// the squared normalised RMSE of TTFT plus the mean squared relative error of
// TPOT. A TTFT error is taken against the run's mean TTFT, not the request's
// own: a request served at once has a TTFT of a step or two, which the step
// clock alone moves by tens of percent, while the queued requests' errors are
// what shapes the distribution. Every TPOT spans hundreds of steps, so its
// relative error is the step cost's. With a figures weight w (calibrate
// --figures-weight), a third term:
//        + w x mean over the table's headline figures (TTFT, TPOT and latency:
//          mean, median, p90, p99) of ((figure_sim - figure) / figure)^2,
// the distribution's shape, which the requests' errors weigh only through
// the queued requests.
struct MeasuredLoss {
  double total = 0;
  double ttft_term = 0;
  double tpot_term = 0;
  double figures_term = 0;  // 0 unless weighted
  double figures_weight = 0;
  std::size_t ttft_requests = 0;
  std::size_t tpot_requests = 0;
  double ttft_scale_s = 0;  // the mean measured TTFT
};

struct MeasuredReport {
  std::string source;  // the run folder or measurement file
  std::string engine;  // a line saying what served it (model, parallelism)
  std::vector<MeasuredTableRow> table;
  std::vector<MeasuredRequestRow> requests;  // in replay order
  std::uint64_t left_out = 0;                // measured requests the engine never served
  std::vector<MeasuredTickRow> ticks;        // empty without timeseries.csv
  // The stat logger's origin before the replay's: timeseries.csv counts from
  // the logger's start, found by matching its prompt throughput to the
  // measured first tokens; none when it could not be told.
  std::optional<double> tick_offset_s;
  std::optional<double> running_mean_abs_diff;  // over the ticks
  std::optional<double> waiting_mean_abs_diff;
  MeasuredLoss loss;
};

// The table in the layout of llmservingsim_vs_vllm.txt, with an infersim
// column, and the other simulator's figure and diff when there is one.
std::string measured_table_text(const MeasuredReport& report);
// The console's summary lines after the table: loss and its terms, request
// errors, the ticks' running and waiting differences.
std::string measured_summary_text(const MeasuredReport& report);

// measured.csv: one row a request in replay order,
// request,input_tokens,output_tokens,arrival_s,replica, measured_start_s,
// measured_first_token_s, measured_finish_s, simulated_start_s,
// simulated_first_token_s, simulated_finish_s, measured_ttft_s,
// simulated_ttft_s, measured_tpot_s, simulated_tpot_s, measured_latency_s,
// simulated_latency_s, preemptions, rejected (empty where there is no value).
std::string measured_requests_csv(const MeasuredReport& report);
// measured_timeseries.csv: t_s,replay_s,measured_running,simulated_running,
// measured_waiting,simulated_waiting,measured_kv_pct,simulated_kv_pct.
std::string measured_ticks_csv(const MeasuredReport& report);
// measured_cdf.csv: fraction and each side's TTFT, TPOT and latency at it.
std::string measured_cdf_csv(const MeasuredReport& report);

// The scripts of plots/measured_*.gp: the CDFs of TTFT, TPOT and latency,
// measured against simulated, and (with ticks) running, waiting and KV use.
std::vector<PlotScript> measured_plot_scripts(const MeasuredReport& report);

// The file names write_measured_report writes.
inline constexpr const char* kMeasuredFiles[] = {"measured.csv", "measured_timeseries.csv",
                                                 "measured_cdf.csv", "measured_table.txt"};

// Writes measured.csv, measured_cdf.csv, measured_table.txt, and
// measured_timeseries.csv when there are ticks, into `dir`; with `plots`, the
// scripts into dir/plots and renders them (`rendering` says what happened).
// Returns the scripts written.
std::vector<PlotScript> write_measured_report(const std::filesystem::path& dir,
                                              const MeasuredReport& report, bool plots,
                                              PlotRendering* rendering);

// The table's figures for summary.json: `source`, `engine`, `table` (a row a
// figure: metric, statistic, measured_ms, simulated_ms, diff_pct, and the
// other simulator's other_ms and other_diff_pct when there is one), `loss`,
// and the ticks' running and waiting differences when there are ticks.
nlohmann::ordered_json measured_to_json(const MeasuredReport& report);

// The replay's part of the run folder, for write_run: its table in the
// recorded mode's summary.json under `measured` (measured_to_json), its files
// (write_measured_report) and the page's section "Against the measured run"
// (the table as HTML, then the measured plots). `report` must outlive it.
RunSection measured_section(const MeasuredReport& report);

// Whether the run recorded its KV cache use: some tick holds a value above 0
// (a stat logger that does not record it writes 0 at every tick).
bool kv_use_recorded(const MeasuredReport& report);

}  // namespace infersim
