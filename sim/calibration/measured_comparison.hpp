// A replay checked against the benchmark it reproduces (`run --measured`):
// each request's measured and simulated time to first token and end-to-end
// latency, matched by order, and their mean absolute percentage errors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/measurement_reader.hpp"
#include "report/run_folder.hpp"
#include "scenario/scenario.hpp"
#include "trace/trace.hpp"

namespace infersim {

struct MeasuredRow {
  std::uint64_t id = 0;  // the request's index in the replay
  double measured_ttft_s = 0;
  double simulated_ttft_s = 0;
  double measured_e2e_s = 0;
  double simulated_e2e_s = 0;
};

struct MeasuredComparison {
  std::string path;
  std::vector<MeasuredRow> rows;
  // Mean of |simulated - measured| / measured over the requests whose measured
  // time is above 0, in percent.
  double ttft_mape_pct = 0;
  double e2e_mape_pct = 0;
};

// Reads the measurement and checks it can be matched to the replay: the
// recorded mode runs, and the file holds as many requests as the trace.
// Throws InputError otherwise.
Measurement read_measured_for_replay(const std::string& path, const Settings& settings,
                                     const Trace& trace);

// Request k of the replay against request k of the measurement. Throws
// InputError when the counts differ (requests dropped after --duration) or the
// recorded mode kept no per-request outcomes.
MeasuredComparison compare_with_measurement(const Measurement& measurement,
                                            const ModeResult& recorded);

// measured.csv: id,measured_ttft_s,simulated_ttft_s,measured_e2e_s,simulated_e2e_s
std::string measured_csv(const MeasuredComparison& comparison);
// The console line: `measured   requests=N ttft_mape=x % e2e_mape=y %`.
std::string measured_line(const MeasuredComparison& comparison);
// {"file", "requests", "ttft_mape", "e2e_mape"}, the MAPEs in percent.
nlohmann::ordered_json measured_to_json(const MeasuredComparison& comparison);

// Writes measured.csv into the recorded mode's folder of a written run, and
// adds the `measured` object to that folder's summary.json.
void write_measured(const RunFolder& folder, const ScenarioResult& result,
                    const MeasuredComparison& comparison);

}  // namespace infersim
