#include "studies/sweep_plots.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "core/number_format.hpp"
#include "report/run_folder.hpp"

namespace infersim {
namespace fs = std::filesystem;
namespace {

// A colour a line (a combination of the other knobs' values), in turn.
constexpr const char* kColours[] = {"#c0392b", "#2471a3", "#239b56", "#b7950b",
                                    "#7d3c98", "#ca6f1e", "#17a589", "#566573"};
constexpr const char* kRecordedColour = "#c0392b";
constexpr const char* kSyntheticColour = "#2471a3";
constexpr const char* kRetimedColour = "#1e8449";

// A mode's colour and dash: recorded solid red, retimed dotted green,
// synthetic dashed blue.
const char* mode_colour(const std::string& mode) {
  return mode == "synthetic" ? kSyntheticColour
         : mode == "retimed" ? kRetimedColour
                             : kRecordedColour;
}
const char* mode_dash(const std::string& mode) {
  return mode == "synthetic" ? "2" : mode == "retimed" ? "3" : "1";
}

// What a figure is, for its axis; `log` says the axis is logarithmic.
std::string figure_label(const std::string& key, bool log) {
  static const std::map<std::string, std::string> kLabels = {
      {"success_rate", "success rate (share of requests meeting their deadline)"},
      {"avg_wait_s", "mean wait (s)"},
      {"ttft_p99_s", "time to first token, 99th percentile (s)"},
      {"utilization", "utilization (busy share of the server)"},
      {"energy_wh", "energy (Wh)"},
      {"prefix_hit_rate", "prefix-cache hit rate (share of prompt tokens)"},
      {"kv_peak_utilization", "peak KV-cache use (share of a replica's blocks)"},
  };
  const auto found = kLabels.find(key);
  if (found == kLabels.end()) return key + (log ? " (logarithmic)" : "");
  std::string label = found->second;
  if (log) {
    // Inside the unit's brackets when there is one: "(s, logarithmic)".
    if (label.back() == ')') {
      label.insert(label.size() - 1, ", logarithmic");
    } else {
      label += " (logarithmic)";
    }
  }
  return label + " [" + key + "]";
}

// A gnuplot string literal.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string header(const std::string& name, const std::string& title, const std::string& data) {
  return plot_script_opening(name, title, data, "960,480", "the folder of " + data, false) +
         "set key outside right top box lc rgb \"#cccccc\"\n"
         "# A margin, so no point sits on the side borders.\n"
         "set autoscale xfix\n"
         "set offsets graph 0.03, graph 0.03, 0, 0\n"
         "set title " +
         quoted(title) + "\n";
}

// A table of our own writing: a header and rows of fields apart by commas (no
// quoting: no field holds a comma).
struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  explicit CsvTable(const std::string& csv) {
    std::size_t begin = 0;
    bool first = true;
    while (begin < csv.size()) {
      std::size_t end = csv.find('\n', begin);
      if (end == std::string::npos) end = csv.size();
      std::vector<std::string> fields;
      std::size_t at = begin;
      for (;;) {
        const std::size_t comma = csv.find(',', at);
        if (comma == std::string::npos || comma >= end) {
          fields.push_back(csv.substr(at, end - at));
          break;
        }
        fields.push_back(csv.substr(at, comma - at));
        at = comma + 1;
      }
      if (first) {
        columns = std::move(fields);
        first = false;
      } else {
        fields.resize(columns.size());
        rows.push_back(std::move(fields));
      }
      begin = end + 1;
    }
  }
  std::optional<std::size_t> column(const std::string& name) const {
    const auto at = std::find(columns.begin(), columns.end(), name);
    if (at == columns.end()) return std::nullopt;
    return static_cast<std::size_t>(at - columns.begin());
  }
};

// A condition on a row: column == value, as text.
struct Match {
  std::string column;
  std::string value;
};

bool matches(const CsvTable& table, const std::vector<std::string>& row,
             const std::vector<Match>& conditions) {
  for (const Match& m : conditions) {
    const auto c = table.column(m.column);
    if (!c || row[*c] != m.value) return false;
  }
  return true;
}

bool has_value(const CsvTable& table, const std::vector<Match>& conditions,
               const std::string& key) {
  const auto c = table.column(key);
  if (!c) return false;
  return std::any_of(table.rows.begin(), table.rows.end(), [&](const auto& row) {
    return !row[*c].empty() && matches(table, row, conditions);
  });
}

std::string condition_text(const std::vector<Match>& conditions) {
  std::string out;
  for (const Match& m : conditions)
    out += (out.empty() ? "" : " && ") + std::string("strcol(") + quoted(m.column) + ") eq " +
           quoted(m.value);
  return out;
}

// Every combination of the values of axes[1..], the last varying fastest.
std::vector<std::vector<Match>> combinations(const std::vector<SweepPlotAxis>& axes) {
  std::vector<std::vector<Match>> out = {{}};
  for (std::size_t a = 1; a < axes.size(); ++a) {
    std::vector<std::vector<Match>> next;
    for (const auto& before : out) {
      for (const std::string& value : axes[a].values) {
        next.push_back(before);
        next.back().push_back({axes[a].name, value});
      }
    }
    out = std::move(next);
  }
  return out;
}

std::optional<double> number_of(const std::string& text) {
  double value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// The numbers of a column, over the rows.
std::vector<double> column_numbers(const CsvTable& table, const std::string& name) {
  std::vector<double> out;
  if (const auto c = table.column(name)) {
    for (const auto& row : table.rows) {
      if (const auto n = number_of(row[*c])) out.push_back(*n);
    }
  }
  return out;
}

// Logarithmic when every value is positive and they span over two decades.
bool wide_positive(const std::vector<double>& values) {
  if (values.empty()) return false;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return *low > 0 && *high >= *low * 100;
}

// A share (success_rate, a hit rate): every value from 0 to 1. A logarithmic
// axis would crowd the top, where a 0.99 target sits, into a sliver.
bool fraction(const std::vector<double>& values) {
  return !values.empty() &&
         std::all_of(values.begin(), values.end(), [](double v) { return v >= 0 && v <= 1; });
}

}  // namespace

const std::vector<std::string>& sweep_plot_keys() {
  // `rejected` beside the latencies: a cache that refuses requests makes the
  // ones it serves look quick (the batching server only).
  static const std::vector<std::string> kKeys = {
      "success_rate", "avg_wait_s",      "ttft_p99_s",          "utilization",
      "energy_wh",    "prefix_hit_rate", "kv_peak_utilization", "rejected",
  };
  return kKeys;
}

std::vector<PlotScript> sweep_plot_scripts(const std::vector<SweepPlotAxis>& axes,
                                           const std::vector<std::string>& modes,
                                           const std::string& csv) {
  std::vector<PlotScript> out;
  if (axes.empty()) return out;
  const CsvTable table(csv);
  const SweepPlotAxis& x = axes.front();
  const std::vector<std::vector<Match>> combos = combinations(axes);

  // The first axis: a number as itself, a word as its place in the sweep.
  std::string x_setup = "set xlabel " + quoted(x.name) + "\n";
  std::string x_using = "\"" + x.name + "\"";
  std::string x_scale;  // after the tables: gnuplot refuses a table on a logarithmic axis
  bool sort_x = true;
  if (!x.numeric) {
    std::string chain, tics;
    for (std::size_t i = 0; i < x.values.size(); ++i) {
      chain += "s eq " + quoted(x.values[i]) + " ? " + std::to_string(i) + " : ";
      tics += (i == 0 ? "" : ", ") + quoted(x.values[i]) + " " + std::to_string(i);
    }
    x_setup += "x_of(s) = " + chain + "NaN\nset xtics (" + tics +
               ")\nset xrange [-0.5:" + shortest(static_cast<double>(x.values.size()) - 0.5) +
               "]\n";
    x_using = "(x_of(strcol(" + quoted(x.name) + ")))";
    sort_x = false;  // the rows come in sweep order already
  } else {
    std::vector<double> numbers;
    for (const std::string& v : x.values) {
      if (const auto n = number_of(v)) numbers.push_back(*n);
    }
    if (wide_positive(numbers)) {
      x_setup = "set xlabel " + quoted(x.name + " (logarithmic)") + "\n";
      x_scale = "set logscale x\n";
    }
  }

  for (const std::string& key : sweep_plot_keys()) {
    if (!table.column(key)) continue;
    const bool ci = table.column(key + "_ci95").has_value();
    struct Line {
      std::string table_name, title, colour;
      std::string mode;
      bool error_bars;
    };
    std::vector<Line> lines;
    std::string tables;
    for (std::size_t c = 0; c < combos.size(); ++c) {
      std::string combo;
      for (const Match& m : combos[c])
        combo += (combo.empty() ? "" : ", ") + m.column + "=" + m.value;
      for (const std::string& mode : modes) {
        std::vector<Match> conditions = {{"mode", mode}};
        conditions.insert(conditions.end(), combos[c].begin(), combos[c].end());
        if (!has_value(table, conditions, key)) continue;
        Line line;
        line.table_name = "$line" + std::to_string(lines.size() + 1);
        line.title = combo.empty() ? mode : combo + ", " + mode;
        line.colour = kColours[c % std::size(kColours)];
        line.mode = mode;
        line.error_bars = mode != "recorded" && ci && has_value(table, conditions, key + "_ci95");
        std::string columns = x_using + ":" + quoted(key);
        if (line.error_bars) {
          const std::string half = quoted(key + "_ci95");
          columns += ":(strcol(" + half + ") eq \"\" ? 0 : column(" + half + "))";
        }
        tables += "set table " + line.table_name + "\nplot 'sweep.csv' using " + columns +
                  " with table if (" + condition_text(conditions) + ")\n";
        lines.push_back(std::move(line));
      }
    }
    if (lines.empty()) continue;

    PlotScript p;
    p.name = key;
    const std::string against = axes.size() == 1 ? "" : ", a line a value of " + [&] {
      std::string others;
      for (std::size_t a = 1; a < axes.size(); ++a)
        others += (a == 1 ? "" : " and ") + axes[a].name;
      return others;
    }();
    p.title = key + " against " + x.name + against;
    p.caption = "The sweep's " + key + " at each " + x.name + against +
                "; recorded traffic solid, synthetic dashed, retimed (the recorded requests at "
                "synthetic instants) dotted" +
                (ci ? " (with the replications' 95 % interval)" : "") + ".";
    const bool log_y = wide_positive(column_numbers(table, key));
    p.script = header(p.name, p.title, "sweep.csv") + x_setup + "set ylabel " +
               quoted(figure_label(key, log_y)) +
               "\n# A table a line: the rows of its mode and knob values.\n"
               "set datafile separator comma\n" +
               tables + "unset table\nset datafile separator whitespace\n" + x_scale +
               (log_y ? "set logscale y\n" : "") + "plot ";
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const Line& l = lines[i];
      const std::string style = " lw 2 pt " + std::string(l.mode == "recorded" ? "7" : "6") +
                                " ps 0.8 lc rgb \"" + l.colour + "\" dt " + mode_dash(l.mode);
      p.script += (i == 0 ? "" : ", \\\n     ") + l.table_name + " using 1:2" +
                  (sort_x ? " smooth unique" : "") + " with linespoints" + style + " title " +
                  quoted(l.title);
      if (l.error_bars) {
        p.script += ", \\\n     " + l.table_name +
                    " using 1:2:3 with yerrorbars pt 6 ps 0.8 lc rgb \"" + l.colour + "\" notitle";
      }
    }
    p.script += "\nunset output\n";
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PlotScript> capacity_plot_scripts(const std::string& knob,
                                              const std::vector<CapacityPlotMode>& modes,
                                              const std::vector<std::string>& target_keys,
                                              const std::vector<CapacityPlotBound>& bounds,
                                              const std::string& csv) {
  std::vector<PlotScript> out;
  const CsvTable table(csv);
  std::vector<std::string> keys = target_keys;
  for (const std::string& key : sweep_plot_keys()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  const bool log_x = wide_positive(column_numbers(table, knob));

  for (const std::string& key : keys) {
    std::vector<const CapacityPlotMode*> drawn;
    for (const CapacityPlotMode& m : modes) {
      if (has_value(table, {{"mode", m.mode}}, key)) drawn.push_back(&m);
    }
    if (drawn.empty()) continue;
    PlotScript p;
    p.name = key;
    p.title = key + " against " + knob + " at each run of the search";
    p.caption =
        "The search's runs: " + key + " at each " + knob +
        " run, recorded traffic solid, synthetic dashed, retimed dotted; a filled point met the "
        "target, an open one did not. A vertical line marks each mode's answer.";
    const std::vector<double> values = column_numbers(table, key);
    const bool share = fraction(values);
    const bool log_y = !share && wide_positive(values);
    // A share with a target near 1: the axis from a little below the target
    // to 1, the target in its upper part; runs below it sit on the floor.
    std::optional<double> bottom;
    for (const CapacityPlotBound& b : bounds) {
      if (share && b.key == key && b.value >= 0.9 && b.value < 1) {
        bottom = std::max(0.0, b.value - 4 * (1 - b.value));
      }
    }
    p.script = header(p.name, p.title, "capacity.csv") + "set xlabel " +
               quoted(knob + (log_x ? " (logarithmic)" : "")) + "\n" + "set ylabel " +
               quoted(figure_label(key, log_y)) + "\n# A table a mode: its runs' " + knob + ", " +
               key +
               " and whether the run met the target.\n"
               "set datafile separator comma\n";
    for (const CapacityPlotMode* m : drawn) {
      p.script += "set table $" + m->mode + "\nplot 'capacity.csv' using " + quoted(knob) + ":" +
                  quoted(key) + ":(strcol(\"met\") eq \"true\" ? 1 : 0) with table if (strcol(" +
                  quoted("mode") + ") eq " + quoted(m->mode) + ")\n";
    }
    // A logarithmic axis after the tables: gnuplot refuses a table on one.
    p.script += std::string("unset table\nset datafile separator whitespace\n") +
                (log_x ? "set logscale x\n" : "") + (log_y ? "set logscale y\n" : "");
    if (bottom) {
      p.script += "set yrange [" + shortest(*bottom) + ":1.002]\n";
      p.caption += " The axis shows " + shortest(*bottom) +
                   " to 1 around the target; a run below it sits on the axis's floor.";
    }
    const std::string y = bottom
                              ? "($2 < " + shortest(*bottom) + " ? " + shortest(*bottom) + " : $2)"
                              : std::string("2");
    int arrow = 0;
    std::string answers;  // the answers' entries in the key: never clipped at the edge
    for (const CapacityPlotMode* m : drawn) {
      if (!m->answer) continue;
      const std::string colour = mode_colour(m->mode);
      const std::string dash = mode_dash(m->mode);
      const std::string at = shortest(*m->answer);
      ++arrow;
      p.script += "set arrow " + std::to_string(arrow) + " from first " + at +
                  ", graph 0 to first " + at + ", graph 1 nohead lw 1.5 lc rgb \"" + colour +
                  "\" dt " + dash + "\n";
      answers += ", \\\n     NaN with lines lw 1.5 lc rgb \"" + colour + "\" dt " + dash +
                 " title " + quoted(m->mode + " answer: " + knob + "=" + at);
    }
    p.script += "plot ";
    bool first = true;
    for (const CapacityPlotMode* m : drawn) {
      const std::string colour = mode_colour(m->mode);
      const std::string t = "$" + m->mode;
      p.script += std::string(first ? "" : ", \\\n     ") + t + " using 1:" + y +
                  " smooth unique with lines lw 2 lc rgb \"" + colour + "\" dt " +
                  mode_dash(m->mode) + " title " + quoted(m->mode) + ", \\\n     " + t +
                  " using 1:($3 > 0 ? " + y + " : NaN) with points pt 7 ps 0.9 lc rgb \"" + colour +
                  "\" title " + quoted(m->mode + ", met") + ", \\\n     " + t +
                  " using 1:($3 > 0 ? NaN : " + y + ") with points pt 6 ps 0.9 lc rgb \"" + colour +
                  "\" title " + quoted(m->mode + ", missed");
      first = false;
    }
    for (const CapacityPlotBound& b : bounds) {
      if (b.key != key) continue;
      p.script += ", \\\n     " + shortest(b.value) +
                  " with lines lw 1 dt 3 lc rgb \"#666666\" title " +
                  quoted("target: " + b.key + b.comparison + shortest(b.value));
    }
    p.script += answers + "\nunset output\n";
    out.push_back(std::move(p));
  }
  return out;
}

PlotScript fleet_cost_plot_script(const std::vector<CapacityPlotMode>& modes,
                                  const CapacityPlotBound& bound, const std::string& csv) {
  const CsvTable table(csv);
  const std::string& key = bound.key;
  const std::vector<double> values = column_numbers(table, key);
  const bool log_y = !fraction(values) && wide_positive(values);
  PlotScript p;
  p.name = "fleet_cost";
  p.title = "Fleets searched: cost an hour against " + key;
  p.caption = "Every fleet the search ran, its cost an hour against " + key +
              ", a colour a mode; a filled point met the target, an open one did not. The line "
              "joins a mode's front, the fleets no other run beats on both cost and " +
              key +
              "; a vertical line marks the cost of each mode's cheapest fleet that meets the "
              "target.";
  p.script = header(p.name, p.title, "capacity.csv") +
             "set xlabel \"cost of the fleet ($ an hour)\"\nset ylabel " +
             quoted(figure_label(key, log_y)) +
             "\n# Two tables a mode: each run's cost, figure and whether it met the target; "
             "the front's cost and figure.\nset datafile separator comma\n";
  std::vector<std::string> drawn;
  int arrow = 0;
  std::string answers;  // the answers' entries in the key
  for (const CapacityPlotMode& mode : modes) {
    const std::string& m = mode.mode;
    if (!has_value(table, {{"mode", m}}, key)) continue;
    drawn.push_back(m);
    if (mode.answer) {
      const std::string at = shortest(*mode.answer);
      p.script += "set arrow " + std::to_string(++arrow) + " from first " + at +
                  ", graph 0 to first " + at + ", graph 1 nohead lw 1.5 lc rgb \"" +
                  mode_colour(m) + "\" dt " + mode_dash(m) + "\n";
      answers += ", \\\n     NaN with lines lw 1.5 lc rgb \"" + std::string(mode_colour(m)) +
                 "\" dt " + mode_dash(m) + " title " + quoted(m + " cheapest: $" + at + " an hour");
    }
    p.script += "set table $" + m + "\nplot 'capacity.csv' using \"usd_per_hour\":" + quoted(key) +
                ":(strcol(\"met\") eq \"true\" ? 1 : 0) with table if (strcol(\"mode\") eq " +
                quoted(m) + ")\n" + "set table $" + m +
                "_front\nplot 'capacity.csv' using \"usd_per_hour\":" + quoted(key) +
                " with table if (strcol(\"mode\") eq " + quoted(m) +
                " && strcol(\"front\") eq \"true\")\n";
  }
  p.script += std::string("unset table\nset datafile separator whitespace\n") +
              (log_y ? "set logscale y\n" : "") + "plot ";
  bool first = true;
  for (const std::string& m : drawn) {
    const std::string colour = mode_colour(m);
    const std::string t = "$" + m;
    p.script += std::string(first ? "" : ", \\\n     ") + t +
                "_front using 1:2 smooth unique with lines lw 2 lc rgb \"" + colour + "\" dt " +
                mode_dash(m) + " title " + quoted(m + " front") + ", \\\n     " + t +
                " using 1:($3 > 0 ? $2 : NaN) with points pt 7 ps 0.9 lc rgb \"" + colour +
                "\" title " + quoted(m + ", met") + ", \\\n     " + t +
                " using 1:($3 > 0 ? NaN : $2) with points pt 6 ps 0.9 lc rgb \"" + colour +
                "\" title " + quoted(m + ", missed");
    first = false;
  }
  p.script += ", \\\n     " + shortest(bound.value) +
              " with lines lw 1 dt 3 lc rgb \"#666666\" title " +
              quoted("target: " + key + bound.comparison + shortest(bound.value)) + answers +
              "\nunset output\n";
  return p;
}

void write_plots(const fs::path& folder, const std::vector<PlotScript>& scripts,
                 std::ostream& notices, const std::string& gnuplot) {
  if (scripts.empty()) return;
  std::error_code error;
  fs::create_directories(folder / "plots", error);
  if (error) throw OutputError((folder / "plots").string() + ": cannot create: " + error.message());
  for (const PlotScript& p : scripts)
    write_file_atomically(folder / "plots" / (p.name + ".gp"), p.script);
  const PlotRendering rendering = render_plots(folder, scripts, gnuplot);
  if (!rendering.message.empty()) notices << rendering.message << '\n';
}

std::optional<PlotScript> frontier_plot_script(const std::vector<FrontierPoint>& points) {
  // The configurations in the order they first come, each its points.
  std::vector<std::string> configurations;
  for (const FrontierPoint& p : points) {
    if (!p.per_gpu_tps || !p.per_user_tps) continue;
    if (std::find(configurations.begin(), configurations.end(), p.configuration) ==
        configurations.end()) {
      configurations.push_back(p.configuration);
    }
  }
  if (configurations.empty()) return std::nullopt;
  PlotScript plot;
  plot.name = "frontier";
  plot.title = "Throughput against interactivity: a closed loop over its cap";
  plot.caption =
      "Each point a closed loop at one cap on requests in flight (labelled N, with its mean "
      "TTFT): a user's output tokens a second (1 / mean TPOT) across, the output tokens a "
      "second each GPU serves up; a line a configuration. A ringed point is on the frontier: no "
      "other point serves more tokens a second both per GPU and per user.";
  plot.script = header(plot.name, plot.title, "frontier.csv") +
                "set xlabel \"output tokens a second per user (1 / mean TPOT)\"\n"
                "set ylabel \"output tokens a second per GPU\"\n"
                "set grid lc rgb \"#dddddd\"\n";
  std::string plots;
  for (std::size_t c = 0; c < configurations.size(); ++c) {
    const std::string block = "$c" + std::to_string(c);
    plot.script += block + " << EOD\n";
    for (const FrontierPoint& p : points) {
      if (p.configuration != configurations[c] || !p.per_gpu_tps || !p.per_user_tps) continue;
      const std::string ttft =
          p.ttft_mean_s ? ", " + fixed(*p.ttft_mean_s * 1000, 0) + " ms" : std::string();
      plot.script += shortest(*p.per_user_tps) + " " + shortest(*p.per_gpu_tps) + " " +
                     (p.pareto ? "1" : "0") + " \"" + shortest(p.max_concurrency) + ttft + "\"\n";
    }
    plot.script += "EOD\n";
    const std::string colour = kColours[c % std::size(kColours)];
    const std::string title = configurations[c].empty() ? "closed loop" : configurations[c];
    plots += std::string(plots.empty() ? "plot " : ", \\\n     ") + block +
             " using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb \"" + colour + "\" title " +
             quoted(title) + ", \\\n     " + block +
             " using 1:2:4 with labels offset char 0.6,0.7 font \",8\" tc rgb \"" + colour +
             "\" notitle, \\\n     " + block +
             " using 1:($3 > 0 ? $2 : NaN) with points pt 6 ps 2 lw 1.5 lc rgb \"#222222\" " +
             (c == 0 ? "title \"frontier\"" : "notitle");
  }
  plot.script += plots + "\nunset output\n";
  return plot;
}

}  // namespace infersim
