// The plots of a sweep and of a capacity search: a gnuplot script a figure in
// plots/ of the folder, each reading sweep.csv or capacity.csv by relative path
// and standing alone, rendered to SVG as a run's plots are (render_plots), so
// `gnuplot plots/*.gp` in the folder renders them again after an edit.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/plots.hpp"
#include "studies/frontier.hpp"

namespace infersim {

// The summary figures drawn, in this order, when the table has them: the
// deadline success rate, the mean wait, TTFT p99, utilization, energy, and a
// batching server's prefix-cache hit rate and peak KV-cache use.
const std::vector<std::string>& sweep_plot_keys();

// A varied knob as sweep.csv shows it.
struct SweepPlotAxis {
  std::string name;                 // the column, e.g. "cores"
  std::vector<std::string> values;  // as the table writes them, in sweep order
  bool numeric = true;              // false: words or on/off, drawn as categories in sweep order
};

// The frontier (studies/frontier.hpp): output tokens a second per GPU against
// a user's tokens a second, a curve a configuration in order of its cap, each
// point labelled with its cap and mean TTFT, the Pareto points ringed; the
// points written into the script, which stands alone. None when no point has
// both rates.
std::optional<PlotScript> frontier_plot_script(const std::vector<FrontierPoint>& points);

// A figure a key of sweep_plot_keys() that some row has a value of: the key
// against the first axis, a line a combination of the other axes' values and a
// mode, one colour a combination, recorded solid and synthetic dashed (with
// the synthetic 95 % interval as error bars where the table has one). `csv` is
// sweep.csv's text; a line with no value is left out.
std::vector<PlotScript> sweep_plot_scripts(const std::vector<SweepPlotAxis>& axes,
                                           const std::vector<std::string>& modes,
                                           const std::string& csv);

// A mode of a capacity search, for its plots.
struct CapacityPlotMode {
  std::string mode;
  std::optional<double> answer;  // none: no value met the target
};
// A bound of the target (success_rate >= 0.99): a horizontal line on its figure.
struct CapacityPlotBound {
  std::string key;
  std::string comparison;  // ">=", "<", ...
  double value = 0;
};

// A figure a key (the target's first, then sweep_plot_keys()) that some run
// has a value of: the figure at each value run, against the knob, a line a
// mode (recorded solid, synthetic dashed; filled points met the target, open
// ones did not), the answer a vertical line of the mode's style and the bound
// a grey one. `csv` is capacity.csv's text (mode, run, the knob, met, figures).
// A logarithmic knob axis when the runs span over two decades.
std::vector<PlotScript> capacity_plot_scripts(const std::string& knob,
                                              const std::vector<CapacityPlotMode>& modes,
                                              const std::vector<std::string>& target_keys,
                                              const std::vector<CapacityPlotBound>& bounds,
                                              const std::string& csv);

// A fleet search's picture (studies/fleet_search.hpp): every fleet run, its
// cost an hour against the target's first figure (`bound`), a colour a mode,
// filled points met the target and open ones did not; a line through each
// mode's front (the runs no other beats on both), the bound a grey line and
// each mode's answer (the cheapest fleet's cost an hour) a vertical line of the
// mode's style. `csv` is the search's capacity.csv (mode, usd_per_hour, met,
// front, the figures).
PlotScript fleet_cost_plot_script(const std::vector<CapacityPlotMode>& modes,
                                  const CapacityPlotBound& bound, const std::string& csv);

// Writes the scripts into `folder`/plots and renders them (render_plots); says
// on `notices` when some were not rendered. Throws OutputError when a script
// cannot be written.
void write_plots(const std::filesystem::path& folder, const std::vector<PlotScript>& scripts,
                 std::ostream& notices, const std::string& gnuplot = "gnuplot");

}  // namespace infersim
