// A scenario run end to end, without a process: read the trace, derive the
// requests, put the models on the engine (the server `server.kind` names),
// collect the summary. The command line and the tests both call this; it
// neither prints nor writes files.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/server_model.hpp"
#include "report/mode_result.hpp"
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

// Reads the trace the settings name (MODEL.md section 2), on up to `threads`
// threads (0: as many as usable, at most 2), and checks its digest when the
// settings pin one. Throws InputError.
LoadedTrace load_trace(const Settings& settings, unsigned threads = 0);

// Simulates the tasks (in issue order) on the settings' fleet, network and
// server. `keep_requests` keeps every request's outcome for requests.csv.
// `spare_core` says a second core is free for this run: after a large one
// the serving figures' percentiles are selected on two threads
// (ServingMetrics::prepare; the same result).
ModeResult simulate(const Settings& settings, std::string mode, RequestList tasks,
                    SimTime run_length, std::uint64_t dropped, bool keep_requests,
                    bool spare_core = false);

// The recorded mode's tasks: one per trace record, nothing drawn.
GeneratedRequests generate_recorded(const Settings& settings, const Trace& trace);

// The run length both modes share: --duration, else the last arrival the
// recorded mode replays (after the window, the gap cap, the time scale and the
// resolution) rounded up to a minute.
SimTime shared_run_length(const Settings& settings, const Trace& trace);

// The synthetic mode's tasks for one seed (MODEL.md section 9).
GeneratedRequests generate_synthetic(const Settings& settings, const Trace& trace,
                                     std::uint64_t seed);

// The synthetic mode (named `mode`: "synthetic", or "retimed" for the recorded
// requests at drawn instants), repeated with seeds seed .. seed +
// replications - 1 on up to `threads` threads; the result does not depend on
// `threads`.
ModeResult run_synthetic(const Settings& settings, const Trace& trace, bool keep_requests,
                         unsigned threads, const std::string& mode = "synthetic");

// Every mode the settings ask for (run.mode), on one trace already read.
struct ScenarioResult {
  std::optional<ModeResult> recorded;
  std::optional<ModeResult> synthetic;
  // Compare mode: the recorded requests themselves at the synthetic mode's
  // instants (synthetic sizes `recorded`), so that the recorded/synthetic gap
  // splits into timing (recorded / retimed) and size mix (retimed /
  // synthetic). None when the synthetic mode's sizes are the recorded ones.
  std::optional<ModeResult> retimed;
  // client.compare_closed_loop: the recorded requests sent by a closed loop
  // of the recorded mode's mean in flight (MODEL.md section 4b), mode
  // "closed-loop".
  std::optional<ModeResult> closed_loop;
  // The recorded and synthetic modes that ran, recorded first (the seed's
  // table, the plots).
  std::vector<const ModeResult*> modes() const;
  // Every mode that ran: recorded, retimed, synthetic.
  std::vector<const ModeResult*> all_modes() const;
};

// Told what each mode will replay, as the scenario goes (the console's first
// lines say it before the run ends).
class ScenarioProgress {
 public:
  virtual ~ScenarioProgress() = default;
  // The recorded mode's requests, before they are simulated.
  virtual void replaying(const GeneratedRequests& /*generated*/) {}
  // The synthetic mode, once simulated.
  virtual void drew(const ModeResult& /*synthetic*/, const TraceRates& /*rates*/) {}
  // The retimed mode (the recorded requests at drawn instants), once simulated.
  virtual void drew_retimed(const ModeResult& /*retimed*/, const TraceRates& /*rates*/) {}
};

// One mode alone, as sweeps and capacity searches run them: "recorded",
// "synthetic", or "retimed" (the recorded requests at synthetic instants,
// the synthetic mode with sizes "recorded"), the result named so.
ModeResult run_mode(const Settings& settings, const Trace& trace, const std::string& mode,
                    unsigned threads = 1);

// Runs the scenario, telling `progress` (when given) as it goes.
ScenarioResult run_scenario(const Settings& settings, const Trace& trace, bool keep_requests,
                            unsigned threads, ScenarioProgress* progress = nullptr);
// The same, free to take the trace's records: a scenario of the recorded mode
// alone builds its tasks in their memory (the trace's other fields stay).
ScenarioResult run_scenario_taking_records(const Settings& settings, Trace& trace,
                                           bool keep_requests, unsigned threads,
                                           ScenarioProgress* progress = nullptr);

// Each figure's mean and 95 % half-width over the summaries (null where every
// summary has it null).
std::pair<Summary, Summary> summarize_replications(const std::vector<Summary>& runs);

}  // namespace infersim
