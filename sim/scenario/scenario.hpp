// A scenario run end to end, without a process: read the trace, derive the
// tasks, put the edge model on the engine, collect the summary. The command line
// and the tests both call this.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/request_observer.hpp"
#include "report/serving_metrics.hpp"
#include "report/summary.hpp"
#include "report/time_series.hpp"
#include "request/request.hpp"
#include "request/request_list.hpp"
#include "request/trace_request_generator.hpp"
#include "scenario/settings.hpp"
#include "trace/trace.hpp"

namespace infersim {

struct LoadedTrace {
  Trace trace;
  std::string sha256;
};

// Reads the trace the settings name (MODEL.md section 2) and checks its digest
// when the settings pin one. Throws InputError.
LoadedTrace load_trace(const Settings& settings);

struct ModeResult {
  std::string mode;  // "recorded" or "synthetic"
  RequestList tasks;
  std::vector<RequestOutcome> outcomes;  // empty unless requests were kept
  Summary summary;
  SimTime run_length;
  std::uint64_t dropped = 0;
  std::uint64_t events = 0;
  std::uint64_t seed = 0;  // synthetic: the (first) seed drawn with
  // Synthetic mode with replications: `summary` holds each figure's mean over
  // them, `ci95` its 95 % confidence half-width (Student t), `replications` each
  // seed's own summary; tasks and outcomes are the first seed's.
  Summary ci95;
  std::vector<Summary> replications;
  // timeseries.csv and cdf.csv (the first seed's when replicated).
  TimeSeries time_series;
  LatencyCdf latency_cdf;
};

// Simulates the tasks (in issue order) on the settings' fleet, network and
// server. `keep_requests` keeps every request's outcome for requests.csv.
// `spare_core` says a second core is free for this run: a large one then
// calls its reporters on it while the model runs (the same result).
ModeResult simulate(const Settings& settings, std::string mode, RequestList tasks,
                    SimTime run_length, std::uint64_t dropped, bool keep_requests,
                    bool spare_core = false);

// From this many tasks a run with a spare core reports on it.
inline constexpr std::size_t kReportOnSpareCoreFrom = 20'000;

// The recorded mode's tasks: one per trace record, nothing drawn.
GeneratedRequests generate_recorded(const Settings& settings, const Trace& trace);
// generate_recorded, then simulate.
ModeResult run_recorded(const Settings& settings, const Trace& trace, bool keep_requests);

// The run length both modes share: --duration, else the last arrival the
// recorded mode replays (after the window, the gap cap, the time scale and the
// resolution) rounded up to a minute.
SimTime shared_run_length(const Settings& settings, const Trace& trace);

// The synthetic mode's tasks for one seed (MODEL.md section 9).
GeneratedRequests generate_synthetic(const Settings& settings, const Trace& trace,
                                     std::uint64_t seed);

// The synthetic mode, repeated with seeds seed .. seed + replications - 1 on up
// to `threads` threads; the result does not depend on `threads`.
ModeResult run_synthetic(const Settings& settings, const Trace& trace, bool keep_requests,
                         unsigned threads);

// Every mode the settings ask for (run.mode), on one trace already read.
struct ScenarioResult {
  std::optional<ModeResult> recorded;
  std::optional<ModeResult> synthetic;
  // The modes that ran, recorded first.
  std::vector<const ModeResult*> modes() const;
};

// Runs the scenario. When `progress` is given, says on it what each mode will
// replay before simulating it (the console's first lines).
ScenarioResult run_scenario(const Settings& settings, const Trace& trace, bool keep_requests,
                            unsigned threads, std::ostream* progress = nullptr);
// The same, free to take the trace's records: a scenario of the recorded mode
// alone builds its tasks in their memory (the trace's other fields stay).
ScenarioResult run_scenario_taking_records(const Settings& settings, Trace& trace,
                                           bool keep_requests, unsigned threads,
                                           std::ostream* progress = nullptr);

// Each figure's mean and 95 % half-width over the summaries (null where every
// summary has it null).
std::pair<Summary, Summary> summarize_replications(const std::vector<Summary>& runs);

}  // namespace infersim
