// Writes a run folder (OUTPUT.md), each file atomically, only after the run has
// succeeded. One mode: settings.json, summary.json, summary.csv and
// requests.csv side by side. Compare: settings.json, summary.json nested by
// mode, summary.csv a row a mode, and recorded/ and synthetic/ each with that
// mode's requests.csv and summary.json. A replicated synthetic mode adds
// replications.csv (one row a seed), timeseries_band.csv and cdf_band.csv (the
// seeds' spread) to its folder. Beside each mode's
// summary.json: timeseries.csv and cdf.csv. At the run folder's root: plots/
// (gnuplot scripts, and their SVGs when gnuplot is there) and report.html.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/mode_result.hpp"
#include "report/plots.hpp"
#include "report/report_html.hpp"
#include "report/run_folder.hpp"
#include "report/summary.hpp"

namespace infersim {

// The figures, then their confidence half-widths and the replication count
// when the mode was replicated.
nlohmann::ordered_json summary_to_json(const ModeResult& result);
// Header `mode,<keys>` (the union of the results' keys) and one row a result;
// a missing figure is an empty field.
std::string summary_csv(const std::vector<const ModeResult*>& results);

// A part of a run folder its caller makes (a replay's measured run, say:
// calibration/measured_report): figures of its own in one mode's
// summary.json, files beside the run's, and a section on the page. report/
// writes it where it goes without knowing what it holds.
struct RunSection {
  std::string mode;  // the mode whose summary.json holds `summary` under `key`
  std::string key;
  nlohmann::ordered_json summary;
  // Writes the section's files into the run folder (its path given), and with
  // `plots` their scripts into plots/, rendered, saying in `rendering` which
  // were; returns the scripts, whose figures the page shows in `page`.
  std::function<std::vector<PlotScript>(const std::filesystem::path& folder, bool plots,
                                        PlotRendering& rendering)>
      write_files;
  PageSection page;  // its figures are the scripts write_files returns
};

struct ReportOptions {
  bool plots = true;                // write plots/ and render it
  std::ostream* notices = nullptr;  // told once when the plots could not be rendered
  std::string gnuplot = "gnuplot";  // the program, found on PATH
  // The callers' own parts of the folder, in order (a replay of a measured
  // run's files, its table in the recorded summary.json and its section).
  std::vector<RunSection> sections = {};
  // Compare mode's retimed mode (the recorded requests at synthetic
  // instants): its files in retimed/, its summary beside the others', and
  // summary.json's `attribution` of the gap.
  const ModeResult* retimed = nullptr;
};

// cdf.csv: `fraction,wait_s,ttft_s,e2el_s`, one row a point of LatencyCdf.
std::string latency_cdf_csv(const LatencyCdf& cdf);

// `settings` is the complete settings.json document; `results` holds one mode,
// or recorded and synthetic for a compare run.
void write_run(const RunFolder& folder, const nlohmann::ordered_json& settings,
               const std::vector<const ModeResult*>& results, bool per_request,
               const ReportOptions& report = {});

}  // namespace infersim
