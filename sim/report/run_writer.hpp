// Writes a run folder (OUTPUT.md): settings.json, summary.json, summary.csv and
// requests.csv, each atomically, only after the run has succeeded.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run_folder.hpp"
#include "report/summary.hpp"
#include "scenario/scenario.hpp"

namespace infersim {

nlohmann::ordered_json summary_to_json(const Summary& summary);
// Header `mode,<keys>` and one row a result; a missing figure is an empty field.
std::string summary_csv(const std::vector<const ModeResult*>& results);

// `settings` is the complete settings.json document.
void write_recorded_run(const RunFolder& folder, const nlohmann::ordered_json& settings,
                        const ModeResult& result, bool per_request);

}  // namespace infersim
