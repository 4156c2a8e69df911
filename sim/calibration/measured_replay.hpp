// A real run replayed on the batching server: the engine's knobs from the
// run's meta.json and vLLM's defaults (each assumption said), the requests at
// the engine's own arrivals joined to the workload's prompt blocks, a lean
// replay that records every step and each request's instants, the loss the fit
// minimises, and the comparison the reporter formats (calibration/measured_report).
// Nothing here prints.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "calibration/measured_report.hpp"
#include "calibration/measured_run_reader.hpp"
#include "calibration/measurement_reader.hpp"
#include "model/batching_knobs.hpp"
#include "model/server_model.hpp"
#include "report/request_log.hpp"
#include "request/request_list.hpp"
#include "trace/trace.hpp"

namespace infersim {

// The batching knobs that describe the measured engine.
struct EngineSetup {
  BatchingKnobs knobs;
  std::vector<std::string> facts;        // "knob = value (from where)"
  std::vector<std::string> assumptions;  // what neither the files nor the flags say
  bool kv_blocks_known = false;          // from meta.json or given
  bool kv_blocks_recorded = false;       // from meta.json
  std::string model;                     // as meta.json names it ("" when unknown)
  std::string device_name;               // meta.json's hardware.device_name ("" when not recorded)
  std::int64_t tensor_parallel = 1;      // GPUs an engine (meta.json's, else 1)
  double gpu_memory_utilization = 0.9;   // meta.json's, else vLLM's default
  std::string description;               // "Llama-3.1-8B on 1 replica (TP 1)"
};

// Where `base`'s batching knobs were set ("batching.max_num_seqs", ...): by a
// flag on the command line, or by a settings file or a preset.
struct GivenKnobs {
  std::set<std::string> flags;
  std::set<std::string> files;
};

// The knobs of `run`'s engine, each from the first of: a flag, meta.json (what
// the run recorded), a settings file or a preset, vLLM 0.19's default (said
// as an assumption); each said with where it came from. Throws InputError
// naming meta.json's key for a value the model cannot take (a block size
// that is not a multiple of 16 tokens, ...) or that contradicts another
// (max_num_seqs above max_num_batched_tokens).
EngineSetup engine_setup(const MeasuredRun& run, const BatchingKnobs& base,
                         const GivenKnobs& given);
// The same for a measurement file (aiperf, vLLM bench, CSV): nothing is
// recorded about the engine, so the knobs are `base`'s, said as assumptions.
EngineSetup engine_setup(const BatchingKnobs& base, const GivenKnobs& given);

struct MeasuredReplay {
  std::string source;  // the run folder or measurement file
  // The requests in replay order: arrival offsets (the engine's queued_ts less
  // the first one; a measurement's own trace arrivals), tokens and the
  // workload's prompt block ids. Keep it alive while tasks() is in use.
  Trace trace;
  std::vector<MeasuredFigures> measured;  // by replay id
  std::uint64_t left_out = 0;             // measured requests never served
  // The TTFT residuals' scale: the mean measured TTFT (calibration/measured_report
  // says why).
  double ttft_scale_s = 0;
  std::vector<MeasuredTick> ticks;
  std::vector<PublishedFigure> published;
  std::optional<double> tick_s;  // the timeseries' tick (meta.json, else the rows')
  // Arrivals are the engine's own turns (a run folder's queued_ts), replayed
  // by section 10b's rule; a measurement file's are the client's.
  bool engine_turns = false;
  // The loss's figures term's weight (calibration/measured_report.hpp): 0, none.
  double figures_weight = 0;

  // The replay's tasks (block ids point into `trace`).
  RequestList tasks() const;
};

// The run's served requests at their engine arrivals, joined to the workload
// (`bench-i` is its line i: token counts must agree, and meta.json's
// dataset_hash must be `workload_sha256` when both are known). Throws
// InputError for a workload of another length than requests.jsonl, and for a
// request the workload does not hold or that disagrees.
MeasuredReplay prepare_replay(const MeasuredRun& run, const Trace& workload,
                              const std::string& workload_sha256);
// A measurement file matched by order to the trace it measured: request k of
// the file is record k of the trace (the counts must agree), arriving at the
// trace's offset; TPOT is (e2e - ttft) / (output - 1).
MeasuredReplay prepare_replay(const Measurement& measurement, const Trace& trace);

// What the replay did: each request's outcome as the batching server told it,
// with its details (the replica, preemptions); with no network, its instants
// are the server's (first_token_server, finish).
struct Replay {
  RequestLog requests;            // by replay id
  std::vector<StepRecord> steps;  // in the order they were scheduled
};

// Runs the requests through the batching server with `knobs` (checked
// first), with no network: each request reaches the server at its arrival,
// and its first token and last token are the server's instants.
Replay replay_measured(const MeasuredReplay& replay, const BatchingKnobs& knobs);

// The fit's loss (calibration/measured_report.hpp) of a replay.
MeasuredLoss replay_loss(const MeasuredReplay& replay, const Replay& result);

// A headline figure of a replay against the run's: TTFT, TPOT or latency's
// mean, median, p90 or p99, over the served requests (a TPOT those of two
// tokens or more), as the table computes it. `parts` are the requests the
// simulated figure is made of, by replay id, with their weights: a mean's
// every request at 1/n, a percentile's one or two order statistics as
// NumPy's interpolation weighs them.
enum class FigureMetric { kTtft, kTpot, kLatency };
struct FigureError {
  FigureMetric metric = FigureMetric::kTtft;
  double measured_s = 0;
  double simulated_s = 0;
  std::vector<std::pair<std::size_t, double>> parts;
  double relative() const { return (simulated_s - measured_s) / measured_s; }
};
// The twelve figures (three metrics by mean, median, p90, p99); none for a
// metric no request has, nor for a measured figure of 0.
std::vector<FigureError> figure_errors(const MeasuredReplay& replay, const Replay& result);
// replay_loss with the replay's figure_errors already at hand (read only when
// the figures term is weighted).
MeasuredLoss replay_loss(const MeasuredReplay& replay, const Replay& result,
                         const std::vector<FigureError>& figures);

// The table, each request's instants, the ticks against timeseries.csv and
// the loss.
MeasuredReport compare_replay(const MeasuredReplay& replay, const Replay& result,
                              const EngineSetup& engine);

// A measured source made ready: its replay and its engine's knobs.
struct MeasuredSource {
  MeasuredReplay replay;
  EngineSetup engine;
  bool run_folder = false;  // a run folder (else a measurement file)
};

// The workload a measured run replayed when the user names none: meta.json's
// dataset_path's file in the folder `workloads` beside the run's, when it is
// there; else an InputError naming --trace.
std::string workload_of_run(const std::string& path);

// A folder given as a measured run that holds no requests.jsonl: an
// InputError naming the missing file.
void refuse_folder_without_requests(const std::string& path);

// `path` is a run folder (requests.jsonl, meta.json, ...) joined to the
// workload, or a measurement file (aiperf, vLLM bench, CSV) matched by order
// to the trace `workload`. `base` and `given` as engine_setup takes them.
MeasuredSource load_measured_source(const std::string& path, const Trace& workload,
                                    const std::string& workload_sha256, const BatchingKnobs& base,
                                    const GivenKnobs& given);

}  // namespace infersim
