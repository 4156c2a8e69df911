// The run's plots: gnuplot scripts written to plots/ in the run folder, each
// reading the run's CSV files by relative path, and rendered to SVG by running
// gnuplot from the run folder, so `gnuplot plots/*.gp` there re-renders them
// after an edit.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/mode_result.hpp"

namespace infersim {

// The lines every plot script opens with: what it shows and which file it
// reads, how to render it from `folder`, its own output file (so `gnuplot
// plots/*.gp` writes each plot to its own SVG; render_plots sends one to a
// temporary name by setting outfile_<name> before the script, a name no other
// script reads), an SVG terminal of `size`, CSV input when `csv`, the grid
// and the border.
std::string plot_script_opening(const std::string& name, const std::string& title,
                                const std::string& data, const std::string& size,
                                const std::string& folder = "the run folder", bool csv = true);

struct PlotScript {
  std::string name;     // plots/<name>.gp renders plots/<name>.svg
  std::string title;    // for the report page
  std::string caption;  // how to read it, one or two sentences
  std::string script;   // gnuplot's text
};

// What the plots draw beside a run's own series, from its settings.json: the
// deadline's TTFT budget and the goodput bounds given (--goodput).
struct PlotContext {
  std::optional<double> ttft_budget_s;
  std::optional<double> ttft_slo_s;
  std::optional<double> e2el_slo_s;
};
PlotContext plot_context(const nlohmann::ordered_json& settings);

// The plots of a run of one mode (its files at the folder's root) or of a
// compare run (recorded/ and synthetic/), each mode under its series_label:
// arrivals per slice against the Poisson band, the queue, the server's use
// (busy units; the batching server's KV cache and batch size), the p99 TTFT
// and wait a slice, the deadline-miss rate, and the CDFs of wait, TTFT (with
// the TTFT budget and goodput bound) and E2E latency (with the mean deadline
// budget and goodput bound). A replicated mode's curves carry the band of its
// seeds (timeseries_band.csv, cdf_band.csv); where one mode's curve would lie
// flat under the other's, each has a panel of its own.
std::vector<PlotScript> plot_scripts(const std::vector<const ModeResult*>& results,
                                     const PlotContext& context = {});

// A child process run without a shell.
struct ProgramRun {
  bool started = false;  // false: it could not be run (see `error`)
  int status = -1;       // exit status; 128 + signal when killed
  std::string output;    // stdout and stderr, interleaved
  std::string error;     // why it did not start
};
// Runs argv[0], found on PATH, with the arguments as given, in `cwd`, stdin
// from /dev/null.
ProgramRun run_program(const std::vector<std::string>& argv, const std::filesystem::path& cwd);

struct PlotRendering {
  std::vector<std::string> rendered;  // names whose SVG this run wrote
  std::string message;                // for stderr when not every plot was rendered
};

// Runs `gnuplot` once over every script, from `run_folder`; each SVG is written
// under a temporary name and renamed into place. Without gnuplot, or when it
// fails, nothing is rendered, no stale SVG is left under a plot's name, and the
// message says how to render them by hand.
PlotRendering render_plots(const std::filesystem::path& run_folder,
                           const std::vector<PlotScript>& plots,
                           const std::string& gnuplot = "gnuplot");

}  // namespace infersim
