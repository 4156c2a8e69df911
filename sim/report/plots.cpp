#include "report/plots.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include <functional>

#include "core/number_format.hpp"
#include "report/figure_text.hpp"

extern char** environ;

namespace infersim {
namespace fs = std::filesystem;
namespace {

struct Series {
  std::string label;
  std::string dir;  // "" or "recorded/"
  std::string color;
  std::string band_color;  // lighter, for the seeds' band
  const ModeResult* result;
  bool banded() const { return result->replication_series.size() > 1; }
  std::string band_label() const {
    return label + ", range of " + std::to_string(result->replication_series.size()) + " seeds";
  }
};

std::vector<Series> series_of(const std::vector<const ModeResult*>& results) {
  std::vector<Series> out;
  for (const ModeResult* r : results) {
    const bool recorded = r->mode == "recorded";
    out.push_back({series_label(*r), results.size() > 1 ? r->mode + "/" : "",
                   recorded ? "#c0392b" : "#2471a3", recorded ? "#e6b0aa" : "#a9cce3", r});
  }
  return out;
}

std::string header(const std::string& name, const std::string& title, const std::string& data,
                   const std::string& size = "960,420") {
  return plot_script_opening(name, title, data, size) +
         "set key top right opaque box lc rgb \"#cccccc\"\n";
}

std::string files_read(const std::vector<Series>& series, const std::string& file) {
  std::string out;
  for (const Series& s : series) {
    out += (out.empty() ? "" : " and ") + s.dir + file;
    if (s.banded()) {
      const std::string band = file == "cdf.csv" ? "cdf_band.csv" : "timeseries_band.csv";
      out += " and " + s.dir + band;
    }
  }
  return out;
}

// Slice midpoints: histeps draws each slice's value across its width.
constexpr const char* kMid = "((column(\"slice_start_s\") + column(\"slice_end_s\")) / 2)";

std::string time_axis(const std::vector<Series>& series) {
  SimTime end;
  for (const Series& s : series) {
    if (!s.result->time_series.slices.empty()) {
      end = std::max(end, s.result->time_series.slices.back().end);
    }
  }
  return "set xlabel \"trace time (s)\"\nset xrange [0:" + shortest(std::max(end.seconds(), 1e-9)) +
         "]\n";
}

// A value of a slice as gnuplot reads it from timeseries.csv, and the same
// from the mode's own numbers (to choose the axes).
struct SliceColumn {
  std::string expression;  // gnuplot: the value from the row's columns
  std::string band;        // the column's name in timeseries_band.csv ("" for none)
  std::function<std::optional<double>(const ModeResult&, const TimeSlice&)> value;
};

double largest(const ModeResult& r, const SliceColumn& column) {
  double most = 0;
  for (const TimeSlice& s : r.time_series.slices) {
    if (const auto v = column.value(r, s)) most = std::max(most, *v);
  }
  return most;
}

// Whether the modes' curves of a column need panels of their own: the
// smaller would sit flat at the bottom of the larger's axis (its largest
// value under 1/20 of the other's).
bool separate_panels(const std::vector<Series>& series, const SliceColumn& column) {
  if (series.size() < 2) return false;
  const double a = largest(*series[0].result, column);
  const double b = largest(*series[1].result, column);
  const double high = std::max(a, b);
  const double low = std::min(a, b);
  return high > 0 && low < high / 20;
}

// The band of a replicated mode: the seeds' smallest to largest value of the
// slice, under the first seed's curve.
std::string band_term(const Series& s, const std::string& band, const std::string& scale = "1") {
  return "'" + s.dir + "timeseries_band.csv' using " + kMid + ":(" + scale + " * column(\"" + band +
         "_min\")):(" + scale + " * column(\"" + band + "_max\")) with filledcurves fc rgb \"" +
         s.band_color + "\" fs transparent solid 0.5 noborder title \"" + s.band_label() + "\"";
}

std::string curve_term(const Series& s, const SliceColumn& column, const std::string& title,
                       const std::string& style = "lw 2") {
  return "'" + s.dir + "timeseries.csv' using " + kMid + ":(" + column.expression +
         ") with histeps " + style + " lc rgb \"" + s.color + "\" title \"" + title + "\"";
}

// A plot of one slice column: the modes on one axis, or a panel each when
// one would hide the other.
struct SlicePlot {
  std::string name;
  std::string title;
  std::string ylabel;
  SliceColumn column;
  std::string caption;
  std::string extra;                  // terms added to every panel (a budget line)
  std::optional<SliceColumn> dotted;  // drawn dotted beside each mode's curve
  std::string dotted_suffix;          // after the mode's label in the key
  std::optional<double> ymax;         // else as the data reach
};

PlotScript slice_plot(const std::vector<Series>& series, const SlicePlot& plot) {
  PlotScript p;
  p.name = plot.name;
  p.title = plot.title;
  const bool split = separate_panels(series, plot.column);
  p.caption = plot.caption;
  if (split) {
    p.caption += " Each mode has a panel of its own: on one axis the smaller would lie flat at 0.";
  }
  p.script =
      header(p.name, p.title, files_read(series, "timeseries.csv"), split ? "960,640" : "960,420") +
      time_axis(series) + "set ylabel \"" + plot.ylabel +
      "\"\nset yrange [0:" + (plot.ymax ? shortest(*plot.ymax) : std::string("*")) + "]\n";
  auto terms = [&](const std::vector<const Series*>& in) {
    std::string out;
    auto add = [&](const std::string& term) { out += (out.empty() ? "" : ", \\\n     ") + term; };
    for (const Series* s : in) {
      if (s->banded() && !plot.column.band.empty()) add(band_term(*s, plot.column.band));
    }
    for (const Series* s : in) {
      add(curve_term(*s, plot.column, s->label));
      if (plot.dotted) {
        add(curve_term(*s, *plot.dotted, s->label + plot.dotted_suffix, "lw 1 dt 3"));
      }
    }
    if (!plot.extra.empty()) add(plot.extra);
    return out;
  };
  if (split) {
    // Panels one above the other, their time axes aligned.
    p.script += "set lmargin 10\nset multiplot layout " + std::to_string(series.size()) +
                ",1 title \"" + plot.title + "\"\n";
    for (const Series& s : series)
      p.script += "set title \"" + s.label + "\"\nplot " + terms({&s}) + "\n";
    p.script += "unset multiplot\n";
  } else {
    std::vector<const Series*> all;
    for (const Series& s : series)
      all.push_back(&s);
    p.script += "set title \"" + plot.title + "\"\nplot " + terms(all) + "\n";
  }
  p.script += "unset output\n";
  return p;
}

PlotScript arrivals_plot(const std::vector<Series>& series, double slice_s) {
  PlotScript p;
  p.name = "arrivals";
  p.title = "Arrivals per " + shortest(slice_s) + " s slice";
  const ModeResult& first = *series.front().result;
  const double run_s = first.run_length.seconds();
  const double mean = run_s > 0 ? static_cast<double>(first.tasks.size()) / run_s * slice_s : 0;
  p.caption =
      "Requests arriving in each slice. The grey band is where Poisson arrivals at the " +
      series.front().label + "'s mean rate (" + fixed(mean, 1) +
      " a slice) fall about 95 % of the time: the mean plus or minus two standard deviations.";
  for (const Series& s : series) {
    if (s.banded()) {
      p.caption +=
          " The light band around the " + s.label + " spans its seeds' smallest to largest count.";
    }
  }
  p.script =
      header(p.name, p.title, files_read(series, "timeseries.csv")) + time_axis(series) +
      "set title \"" + p.title + "\"\nset ylabel \"requests arriving\"\nset yrange [0:*]\n" +
      "poisson_mean = " + shortest(mean) + "  # requests / run length x slice length, of the " +
      series.front().label + "\n" +
      "poisson_low = poisson_mean - 2 * sqrt(poisson_mean)\n"
      "poisson_high = poisson_mean + 2 * sqrt(poisson_mean)\n"
      "plot '+' using 1:(poisson_low):(poisson_high) with filledcurves "
      "fc rgb \"#bbbbbb\" fs transparent solid 0.35 noborder title \"Poisson mean ± 2σ\", \\\n"
      "     poisson_mean with lines dt 2 lc rgb \"#666666\" title \"Poisson mean\"";
  for (const Series& s : series) {
    if (s.banded()) p.script += ", \\\n     " + band_term(s, "arrivals");
  }
  for (const Series& s : series) {
    p.script += ", \\\n     '" + s.dir + "timeseries.csv' using " + kMid +
                ":\"arrivals\" with histeps lw 2 lc rgb \"" + s.color + "\" title \"" + s.label +
                "\"";
  }
  p.script += "\nunset output\n";
  return p;
}

PlotScript queue_plot(const std::vector<Series>& series, double slice_s) {
  const ServerDescription& server = series.front().result->server;
  // The axis must hold the largest counts, drawn beside the means.
  const SliceColumn column{
      "column(\"queue_len_mean\")", "queue_len_mean",
      [](const ModeResult&, const TimeSlice& s) { return std::optional<double>(s.queue_len_max); }};
  // The largest count dotted beside each mean.
  const SliceColumn largest{
      "column(\"queue_len_max\")", "",
      [](const ModeResult&, const TimeSlice& s) { return std::optional<double>(s.queue_len_max); }};
  return slice_plot(
      series, {"queue_length", server.queue_title, "requests queued", column,
               std::string("Requests that have reached the server and not yet ") +
                   server.queue_until + ": the time-weighted mean over each " + shortest(slice_s) +
                   " s slice (solid) and the largest count in it (dotted).",
               "", largest, ", largest", std::nullopt});
}

PlotScript utilization_plot(const std::vector<Series>& series, double slice_s) {
  const ModeResult& first = *series.front().result;
  const std::string unit = first.server.unit;
  if (!first.server.steps || !first.time_series.steps) {
    const std::string busy = "busy_" + unit + "s_mean";
    const SliceColumn column{
        "column(\"" + busy + "\")", busy,
        [](const ModeResult&, const TimeSlice& s) { return s.busy_cores_mean; }};
    const std::string all =
        std::to_string(first.server.units) + " " + unit + (first.server.units == 1 ? "" : "s");
    return slice_plot(
        series,
        {"utilization", "Busy " + unit + "s", "busy " + unit + "s (mean)", column,
         "The " + unit + "s at work, time-weighted over each " + shortest(slice_s) +
             " s slice; the dashed line is the server's " + all +
             ": a slice at the line "
             "had no " +
             unit + " to spare.",
         shortest(first.server.units) + " with lines dt 2 lc rgb \"#666666\" title \"" + all + "\"",
         std::nullopt, "", std::max<double>(first.server.units, 1) * 1.08});
  }
  // The batching server: its KV cache in use, and its batches.
  PlotScript p;
  p.name = "utilization";
  p.title = "KV cache use and batch size";
  const double replicas = std::max<double>(first.server.units, 1);
  const std::optional<double> blocks = first.server.kv_blocks;
  // A fleet's replicas are those each mode provisioned in the slice, not its
  // slots (BATCHING.md section 11).
  const bool fleet = first.time_series.fleet;
  p.caption =
      "Top: the KV cache's blocks in use, summed over the replicas, as a share of all of "
      "them" +
      (blocks ? " (" + shortest(*blocks) + ")" : std::string()) +
      "; bottom: the requests running on a replica (its batch), the mean over the " +
      (fleet ? std::string("replicas each mode provisioned in the slice")
             : shortest(replicas) + " replica" + (replicas == 1 ? "" : "s")) +
      "; both time-weighted over each " + shortest(slice_s) + " s slice, 0 while idle.";
  p.script = header(p.name, p.title, files_read(series, "timeseries.csv"), "960,640") +
             time_axis(series) + "set multiplot layout 2,1 title \"" + p.title + "\"\n";
  const std::string kv_scale = blocks ? shortest(100 / *blocks) : "1";
  p.script += "set title \"KV cache blocks in use\"\nset ylabel \"" +
              std::string(blocks ? "blocks in use (%)" : "blocks in use") +
              "\"\nset yrange [0:" + (blocks ? "100" : "*") + "]\nplot ";
  bool first_term = true;
  auto term = [&](const std::string& t) {
    p.script += (first_term ? "" : ", \\\n     ") + t;
    first_term = false;
  };
  for (const Series& s : series) {
    if (s.banded()) term(band_term(s, "kv_blocks_used_mean", kv_scale));
  }
  for (const Series& s : series) {
    term("'" + s.dir + "timeseries.csv' using " + kMid + ":(" + kv_scale +
         " * column(\"kv_blocks_used_mean\")) with histeps lw 2 lc rgb \"" + s.color +
         "\" title \"" + s.label + "\"");
  }
  const std::string per_replica = shortest(1 / replicas);
  // A fleet's mean a slice: over the replica-time provisioned in it.
  const std::string fleet_batch =
      "(column(\"replicas_provisioned_mean\") > 0 ? column(\"running_mean\") / "
      "column(\"replicas_provisioned_mean\") : 0)";
  p.script +=
      "\nset title \"Batch size\"\nset ylabel \"requests running a replica\"\n"
      "set yrange [0:*]\nplot ";
  first_term = true;
  for (const Series& s : series) {
    // The seeds' band has no count of replicas of its own to divide by.
    if (s.banded() && !fleet) term(band_term(s, "running_mean", per_replica));
  }
  for (const Series& s : series) {
    term("'" + s.dir + "timeseries.csv' using " + kMid + ":" +
         (fleet ? fleet_batch : "(" + per_replica + " * column(\"running_mean\"))") +
         " with histeps lw 2 lc rgb \"" + s.color + "\" title \"" + s.label + "\"");
  }
  p.script += "\nunset multiplot\nunset output\n";
  return p;
}

// The batching server's replicas one by one (replicas.csv of one mode): the
// KV cache each holds, and the requests running on each, a line a replica
// (the first kPlottedReplicas when there are more). Sums hide what a router
// leaves uneven; this shows it.
constexpr std::uint32_t kPlottedReplicas = 16;

PlotScript replicas_plot(const Series& s, double slice_s) {
  const ReplicaSeries& rs = s.result->replica_series;
  // A fleet's slots its autoscaler never filled in this mode are left out.
  std::vector<std::uint32_t> present;
  for (std::uint32_t r = 0; r < rs.replicas; ++r) {
    if (rs.ever_provisioned(r)) present.push_back(r);
  }
  const auto shown = static_cast<std::uint32_t>(present.size());
  const std::uint32_t drawn = std::min(shown, kPlottedReplicas);
  const bool fleet = !rs.unit_class.empty();
  PlotScript p;
  p.name = "replicas_" + s.result->mode;
  p.title = "Replica by replica, " + s.label;
  p.caption = std::string(
                  "Top: each replica's KV cache in use, as a share of its blocks; bottom: the "
                  "requests running on it; both time-weighted over each ") +
              shortest(slice_s) + " s slice, 0 while idle (" + s.dir + "replicas.csv" +
              (drawn < shown ? "; the first " + std::to_string(drawn) + " of " +
                                   std::to_string(shown) + " replicas drawn"
                             : std::string()) +
              ")." +
              (fleet ? " Each is named by its class and its index (requests.csv's replica); the " +
                           std::to_string(rs.replicas - shown) + " of the fleet's " +
                           std::to_string(rs.replicas) +
                           " slots never provisioned in this mode are left out."
                     : std::string()) +
              " Lines apart are load the router left uneven.";
  static const char* const kPalette[] = {"#c0392b", "#2471a3", "#1e8449", "#7d3c98",
                                         "#d68910", "#17a589", "#34495e", "#ba4a00"};
  const std::string file = "'" + s.dir + "replicas.csv'";
  const std::string mid = "(column(\"t_s\") + " + shortest(slice_s / 2) + ")";
  const auto panel = [&](const std::string& title, const std::string& ylabel,
                         const std::string& column, const std::string& range) {
    std::string out = "set title \"" + title + "\"\nset ylabel \"" + ylabel + "\"\nset yrange " +
                      range + "\nplot ";
    for (std::uint32_t i = 0; i < drawn; ++i) {
      const std::uint32_t r = present[i];
      out += std::string(i == 0 ? "" : ", \\\n     ") + file + " using " + mid +
             ":(column(\"replica\") == " + std::to_string(r) + " ? column(\"" + column +
             "\") : NaN) with histeps lw 1.5 lc rgb \"" + kPalette[i % 8] + "\" dt " +
             std::to_string(1 + i / 8) + " title \"" + rs.label(r) + "\"";
    }
    return out + "\n";
  };
  p.script = header(p.name, p.title, s.dir + "replicas.csv", "960,640") + time_axis({s}) +
             "set datafile separator comma\nset key outside right top\nset multiplot layout 2,1 "
             "title \"" +
             p.title + "\"\n" +
             panel("KV cache in use", "blocks in use (%)", "kv_use_pct", "[0:100]") +
             panel("Requests running", "requests running", "running_mean", "[0:*]") +
             "unset multiplot\nunset output\n";
  return p;
}

PlotScript miss_plot(const std::vector<Series>& series, double slice_s) {
  PlotScript p;
  p.name = "deadline_misses";
  p.title = "Deadline-miss rate";
  p.caption = "The share of the requests answered in each " + shortest(slice_s) +
              " s slice that missed their deadline; a gap is a slice with no answer.";
  p.script = header(p.name, p.title, files_read(series, "timeseries.csv")) + time_axis(series) +
             "set title \"" + p.title +
             "\"\nset ylabel \"missed / answered in the slice (%)\"\nset yrange [0:100]\nplot ";
  bool first = true;
  for (const Series& s : series) {
    if (!s.banded()) continue;
    p.script += (first ? "" : ", \\\n     ") + band_term(s, "miss_rate", "100");
    first = false;
  }
  for (const Series& s : series) {
    if (!first) p.script += ", \\\n     ";
    first = false;
    // Boxes, as wide as their slice, leave a slice without answers empty.
    p.script += "'" + s.dir + "timeseries.csv' using " + kMid +
                ":(column(\"completions\") > 0 ? 100.0 * column(\"deadline_misses\") / "
                "column(\"completions\") : NaN):(column(\"slice_end_s\") - "
                "column(\"slice_start_s\")) with boxes lc rgb \"" +
                s.color + "\" fs transparent solid 0.3 border lc rgb \"" + s.color + "\" title \"" +
                s.label + "\"";
  }
  p.script += "\nunset output\n";
  return p;
}

// A logarithmic axis when every curve has positive values and together they
// span over two decades; zeros are left out of a logarithmic axis, so a curve
// starts at the share of requests whose value is 0.
bool log_axis(const std::vector<Series>& series, const std::vector<double> LatencyCdf::*column) {
  double low = 0;
  double high = 0;
  for (const Series& s : series) {
    bool positive = false;
    for (const double x : s.result->latency_cdf.*column) {
      if (x <= 0) continue;
      positive = true;
      low = low == 0 ? x : std::min(low, x);
      high = std::max(high, x);
    }
    if (!positive) return false;
  }
  return high > low * 100;
}

// A vertical line at `x` seconds across a CDF, named in the key.
struct Marker {
  double x_s;
  std::string title;
  std::string style;  // gnuplot's dash and colour
};

PlotScript cdf_plot(const std::vector<Series>& series, const std::string& name,
                    const std::string& title, const std::string& column, const std::string& what,
                    const std::vector<double> LatencyCdf::*values,
                    const std::vector<Marker>& markers) {
  PlotScript p;
  p.name = name;
  p.title = title;
  const bool log = log_axis(series, values);
  p.caption = "The share of requests (vertical) whose " + what +
              " was at most the value on the horizontal axis; a curve to the left is faster." +
              (log ? " The axis is logarithmic: requests with a value of 0 are where a curve "
                     "starts."
                   : "");
  for (const Marker& m : markers)
    p.caption += " The " + m.title + " is the vertical line.";
  for (const Series& s : series) {
    if (s.banded()) {
      p.caption += " The light band around the " + s.label +
                   " spans its seeds' smallest to largest value at each share.";
    }
  }
  // The axis reaches the markers, so that a line beyond every request shows.
  double high = 0;
  for (const Series& s : series) {
    for (const double x : s.result->latency_cdf.*values)
      high = std::max(high, x);
  }
  // A curve with every request at 0 (a Poisson run that never queued) would
  // stand on the axis's left edge, hidden by it: the axis starts a little
  // left of 0 and the key says so.
  auto all_zero = [&](const Series& s) {
    const auto& v = s.result->latency_cdf.*values;
    return std::all_of(v.begin(), v.end(), [](double x) { return x <= 0; });
  };
  const bool some_at_zero = std::any_of(series.begin(), series.end(), all_zero);
  if (some_at_zero) {
    for (const Series& s : series) {
      if (all_zero(s)) {
        p.caption += " Every request of the " + s.label + " has a " + what +
                     " of 0: its curve is the vertical line at 0.";
      }
    }
  }
  for (const Marker& m : markers)
    high = std::max(high, m.x_s * 1.05);
  p.script =
      header(p.name, p.title, files_read(series, "cdf.csv")) + "set title \"" + title +
      "\"\nset xlabel \"" + what + " (s" + (log ? ", logarithmic" : "") +
      ")\"\nset ylabel \"share of requests\"\nset yrange [0:1]\nset key bottom right\n" +
      (log ? "set logscale x\nset xrange [*:" + shortest(high > 0 ? high : 1) + "]\n"
           : "set xrange [" +
                 (some_at_zero ? shortest(-0.02 * (high > 0 ? high : 1)) : std::string("0")) + ":" +
                 shortest(high > 0 ? high : 1) + "]\n");
  // Markers as arrows from the bottom to the top of the plot, and as key
  // entries drawn by an invisible point.
  std::string marker_terms;
  for (const Marker& m : markers) {
    p.script += "set arrow from " + shortest(m.x_s) + ", graph 0 to " + shortest(m.x_s) +
                ", graph 1 nohead lw 1.5 " + m.style + "\n";
    marker_terms += ", \\\n     NaN with lines lw 1.5 " + m.style + " title \"" + m.title + " (" +
                    duration_text(m.x_s) + ")\"";
  }
  p.script += "plot ";
  bool first = true;
  auto x_of = [&](const std::string& c) {
    return log ? "(column(\"" + c + "\") > 0 ? column(\"" + c + "\") : NaN)"
               : "(column(\"" + c + "\"))";
  };
  for (const Series& s : series) {
    if (!s.banded()) continue;
    if (!first) p.script += ", \\\n     ";
    first = false;
    p.script += "'" + s.dir + "cdf_band.csv' using " + x_of(column + "_min") +
                ":\"fraction\":(column(\"" + column + "_max\") - column(\"" + column +
                "_min\")):(0) with vectors nohead lw 1 lc rgb \"" + s.band_color + "\" title \"" +
                s.band_label() + "\"";
  }
  for (const Series& s : series) {
    if (!first) p.script += ", \\\n     ";
    first = false;
    p.script += "'" + s.dir + "cdf.csv' using " + x_of(column) +
                ":\"fraction\" with lines lw 2 lc rgb \"" + s.color + "\" title \"" + s.label +
                (all_zero(s) ? " (every request at 0 s)" : "") + "\"";
  }
  p.script += marker_terms + "\nunset output\n";
  return p;
}

std::optional<double> settings_number(const nlohmann::ordered_json& settings, const char* section,
                                      const char* key) {
  if (!settings.is_object() || !settings.contains(section) || !settings[section].is_object()) {
    return std::nullopt;
  }
  const auto& s = settings[section];
  if (!s.contains(key) || !s[key].is_number()) return std::nullopt;
  return s[key].get<double>();
}

}  // namespace

std::string plot_script_opening(const std::string& name, const std::string& title,
                                const std::string& data, const std::string& size,
                                const std::string& folder, bool csv) {
  return "# " + title + "\n# Reads " + data + ".\n# Render from " + folder + ": gnuplot plots/" +
         name + ".gp (writes plots/" + name + ".svg)\nreset\noutfile = \"plots/" + name +
         ".svg\"\nif (exists(\"outfile_" + name + "\")) outfile = outfile_" + name +
         "\nset encoding utf8\nset terminal svg size " + size +
         " dynamic noenhanced font \"sans,12\" background \"#ffffff\"\n"
         "set output outfile\n" +
         (csv ? "set datafile separator comma\n" : "") +
         "set grid lc rgb \"#dddddd\"\n"
         "set border lc rgb \"#444444\"\n";
}

PlotContext plot_context(const nlohmann::ordered_json& settings) {
  PlotContext c;
  c.ttft_budget_s = settings_number(settings, "deadline", "ttft_budget_s");
  if (settings.contains("report") && settings["report"].is_object() &&
      settings["report"].contains("goodput") && settings["report"]["goodput"].is_object()) {
    const auto& g = settings["report"]["goodput"];
    if (g.contains("ttft_ms") && g["ttft_ms"].is_number()) {
      c.ttft_slo_s = g["ttft_ms"].get<double>() / 1000;
    }
    if (g.contains("e2el_ms") && g["e2el_ms"].is_number()) {
      c.e2el_slo_s = g["e2el_ms"].get<double>() / 1000;
    }
  }
  return c;
}

std::vector<PlotScript> plot_scripts(const std::vector<const ModeResult*>& results,
                                     const PlotContext& context) {
  if (results.empty()) return {};
  const std::vector<Series> series = series_of(results);
  const double slice_s = results.front()->time_series.slice.seconds();
  const std::string wait = results.front()->server.wait_name;
  std::vector<Marker> ttft_markers;
  if (context.ttft_budget_s) {
    ttft_markers.push_back({*context.ttft_budget_s, "TTFT budget", "dt 2 lc rgb \"#222222\""});
  }
  const Marker ttft_slo = context.ttft_slo_s ? Marker{*context.ttft_slo_s, "goodput TTFT bound",
                                                      "dt 4 lc rgb \"#7d3c98\""}
                                             : Marker{};
  std::vector<PlotScript> out = {arrivals_plot(series, slice_s), queue_plot(series, slice_s),
                                 utilization_plot(series, slice_s)};
  std::string budget_line;
  if (context.ttft_budget_s) {
    budget_line = shortest(*context.ttft_budget_s) +
                  " with lines dt 2 lw 1.5 lc rgb \"#222222\" title \"TTFT budget (" +
                  duration_text(*context.ttft_budget_s) + ")\"";
  }
  out.push_back(slice_plot(
      series,
      {"ttft_p99",
       "Time to first token (TTFT), p99 a slice",
       "p99 TTFT (s)",
       {"column(\"ttft_p99_s\")", "ttft_p99_s",
        [](const ModeResult&, const TimeSlice& s) { return s.ttft_p99_s; }},
       "The 99th percentile of the TTFT of the requests arriving in each " + shortest(slice_s) +
           " s slice: what one user in a hundred waited for a first token when sending then" +
           (context.ttft_budget_s ? "; the dashed line is the TTFT budget." : "."),
       budget_line,
       std::nullopt,
       "",
       std::nullopt}));
  out.push_back(
      slice_plot(series, {"wait_p99",
                          wait + ", p99 a slice",
                          "p99 wait (s)",
                          {"column(\"wait_p99_s\")", "wait_p99_s",
                           [](const ModeResult&, const TimeSlice& s) { return s.wait_p99_s; }},
                          "The 99th percentile of the wait of the requests starting in each " +
                              shortest(slice_s) + " s slice.",
                          "",
                          std::nullopt,
                          "",
                          std::nullopt}));
  out.push_back(miss_plot(series, slice_s));
  if (series.front().result->time_series.fleet) {
    // A fleet's replicas over time beside each mode (BATCHING.md section 11).
    out.push_back(slice_plot(
        series,
        {"fleet_replicas",
         "Replicas provisioned (solid) and active (dotted)",
         "replicas",
         {"column(\"replicas_provisioned_mean\")", "",
          [](const ModeResult&, const TimeSlice& s) { return s.replicas_provisioned_mean; }},
         "The fleet's replicas a " + shortest(slice_s) +
             " s slice, time-weighted: provisioned (billed: starting, active or draining; solid) "
             "and active (routed to; dotted). An autoscaler that keeps up with Poisson arrivals "
             "and lags a recorded burst shows here beside the queue and the TTFT p99.",
         "",
         SliceColumn{"column(\"replicas_active_mean\")", "",
                     [](const ModeResult&, const TimeSlice& s) { return s.replicas_active_mean; }},
         ", active",
         std::nullopt}));
  }
  for (const Series& s : series) {
    if (!s.result->replica_series.empty()) out.push_back(replicas_plot(s, slice_s));
  }
  // A mode without requests has no distribution to draw (gnuplot refuses an
  // empty file).
  std::vector<Series> with_requests;
  for (const Series& s : series) {
    if (!s.result->latency_cdf.fraction.empty()) with_requests.push_back(s);
  }
  if (!with_requests.empty()) {
    out.push_back(cdf_plot(with_requests, "wait_cdf", wait + ", cumulative distribution", "wait_s",
                           "wait", &LatencyCdf::wait_s, {}));
    std::vector<Marker> markers = ttft_markers;
    if (context.ttft_slo_s) markers.push_back(ttft_slo);
    out.push_back(cdf_plot(with_requests, "ttft_cdf",
                           "Time to first token (TTFT), cumulative distribution", "ttft_s",
                           "time to first token", &LatencyCdf::ttft_s, markers));
    std::vector<Marker> e2el_markers;
    if (const auto budget = figure_value(with_requests.front().result->summary, "avg_budget_s")) {
      e2el_markers.push_back({*budget, "mean deadline budget", "dt 2 lc rgb \"#222222\""});
    }
    if (context.e2el_slo_s) {
      e2el_markers.push_back({*context.e2el_slo_s, "goodput E2E bound", "dt 4 lc rgb \"#7d3c98\""});
    }
    out.push_back(cdf_plot(with_requests, "e2el_cdf", "E2E latency, cumulative distribution",
                           "e2el_s", "end-to-end latency", &LatencyCdf::e2el_s, e2el_markers));
  }
  return out;
}

ProgramRun run_program(const std::vector<std::string>& argv, const fs::path& cwd) {
  ProgramRun out;
  if (argv.empty()) {
    out.error = "no program named";
    return out;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.error = std::strerror(errno);
    return out;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    out.error = std::strerror(spawned);
    return out;
  }
  out.started = true;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(fds[0], buffer, sizeof(buffer));
    if (got > 0) {
      out.output.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      out.error = std::strerror(errno);
      return out;
    }
  }
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

PlotRendering render_plots(const fs::path& run_folder, const std::vector<PlotScript>& plots,
                           const std::string& gnuplot) {
  PlotRendering out;
  if (plots.empty()) return out;
  const std::string suffix = ".tmp-" + std::to_string(::getpid());
  std::error_code ignored;
  // One gnuplot for the batch; the SVGs are renamed into place only when it
  // succeeded, and otherwise removed, stale ones of an earlier run included.
  auto render = [&](const std::vector<const PlotScript*>& batch) {
    std::vector<std::string> argv = {gnuplot};
    for (const PlotScript* p : batch) {
      // Only names of our own making go into gnuplot's text; no path of the user's.
      argv.push_back("-e");
      argv.push_back("outfile_" + p->name + " = 'plots/" + p->name + ".svg" + suffix + "'");
      argv.push_back("plots/" + p->name + ".gp");
    }
    const ProgramRun run = run_program(argv, run_folder);
    for (const PlotScript* p : batch) {
      const fs::path final_path = run_folder / "plots" / (p->name + ".svg");
      const fs::path temp = run_folder / "plots" / (p->name + ".svg" + suffix);
      if (run.started && run.status == 0 && fs::exists(temp, ignored)) {
        std::error_code error;
        fs::rename(temp, final_path, error);
        if (!error) {
          out.rendered.push_back(p->name);
          continue;
        }
      }
      fs::remove(temp, ignored);
      fs::remove(final_path, ignored);
    }
    return run;
  };
  std::vector<const PlotScript*> all;
  for (const PlotScript& p : plots)
    all.push_back(&p);
  ProgramRun run = render(all);
  if (run.started && run.status != 0) {
    // A script that fails stops gnuplot; render the others one by one.
    for (const PlotScript* p : all) {
      const ProgramRun one = render({p});
      if (one.status != 0) run = one;
    }
  }
  const std::string by_hand = "to render them, run `gnuplot plots/*.gp` in " + run_folder.string();
  if (!run.started) {
    out.message =
        "plots: " + gnuplot + " could not be run (" + run.error +
        "; Debian's package is gnuplot-nox); the scripts and their data are written: " + by_hand;
  } else if (out.rendered.size() != plots.size()) {
    // gnuplot's first complaint, on one line.
    std::string said = run.output.substr(0, std::min<std::size_t>(run.output.size(), 300));
    std::replace(said.begin(), said.end(), '\n', ' ');
    while (!said.empty() && said.back() == ' ')
      said.pop_back();
    out.message = "plots: " + gnuplot + " exited with status " + std::to_string(run.status) +
                  (said.empty() ? "" : " (" + said + ")") + "; " +
                  std::to_string(plots.size() - out.rendered.size()) + " of " +
                  std::to_string(plots.size()) + " plots not rendered; " + by_hand;
  }
  return out;
}

}  // namespace infersim
