#include "calibration/measured_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/number_format.hpp"
#include "core/percentiles.hpp"
#include "report/plots.hpp"
#include "report/report_html.hpp"
#include "report/run_folder.hpp"

namespace infersim {
namespace {

std::string padded(const std::string& text, std::size_t width, bool left) {
  if (text.size() >= width) return text;
  const std::string pad(width - text.size(), ' ');
  return left ? text + pad : pad + text;
}

void cell(std::string& out, const std::optional<double>& value) {
  out += ',';
  if (value) append_shortest(out, *value);
}

// Up to 1001 evenly spaced fractions of the sorted values.
std::vector<double> sorted(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values;
}

// A curve of a plot: two of the data's columns, the measured side solid, the
// simulated dashed.
struct Curve {
  std::string x;
  std::string y;
  const char* colour;
  bool dashed;
  std::string title;
};

// A plot of `data`: its title, then `settings` (the axes), then the curves
// drawn `with` lines or steps.
PlotScript measured_plot(const std::string& name, const std::string& title,
                         const std::string& caption, const std::string& data,
                         const std::string& settings, const char* with,
                         const std::vector<Curve>& curves) {
  PlotScript p;
  p.name = name;
  p.title = title;
  p.caption = caption;
  p.script = plot_script_opening(name, title, data, "960,420") +
             "set key bottom right opaque box lc rgb \"#cccccc\"\nset title \"" + title + "\"\n" +
             settings + "plot ";
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const Curve& c = curves[i];
    if (i > 0) p.script += ", \\\n     ";
    p.script += "\"" + data + "\" using (column(\"" + c.x + "\")):(column(\"" + c.y + "\")) with " +
                with + " lw 2 " + (c.dashed ? "dt 2 " : "") + "lc rgb \"" + c.colour +
                "\" title \"" + c.title + "\"";
  }
  p.script += '\n';
  return p;
}

// A plot of measured_timeseries.csv: columns against the tick's end.
PlotScript ticks_plot(const std::string& name, const std::string& title, const std::string& caption,
                      const std::string& ylabel, const std::vector<Curve>& curves) {
  return measured_plot(
      name, title, caption, "measured_timeseries.csv",
      "set xlabel \"seconds of the run\"\nset ylabel \"" + ylabel + "\"\nset key top right\n",
      "steps", curves);
}

// The measured run's table as the console prints it, as HTML.
std::string measured_table_html(const MeasuredReport& m) {
  const bool other = std::any_of(m.table.begin(), m.table.end(),
                                 [](const MeasuredTableRow& r) { return r.other_ms.has_value(); });
  std::string out =
      "<table class=\"measured\">\n<thead><tr><th>Figure</th><th>Measured (ms)</th>"
      "<th>infersim (ms)</th><th>Diff %</th>" +
      std::string(other ? "<th>LLMServingSim (ms)</th><th>Diff %</th>" : "") +
      "</tr></thead>\n<tbody>\n";
  for (const MeasuredTableRow& r : m.table) {
    out += "<tr><th scope=\"row\">" + html_escape(r.metric + " " + r.statistic) + "</th><td>" +
           fixed(r.measured_ms, 1) + "</td><td>" + fixed(r.simulated_ms, 1) + "</td><td>" +
           (r.diff_pct() >= 0 ? "+" : "") + fixed(r.diff_pct(), 1) + "</td>";
    if (other) {
      out += r.other_ms ? "<td>" + fixed(*r.other_ms, 1) + "</td><td>" +
                              (*r.other_diff_pct() >= 0 ? "+" : "") +
                              fixed(*r.other_diff_pct(), 1) + "</td>"
                        : "<td></td><td></td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace

std::array<MetricSamples, 3> served_samples(const std::vector<MeasuredRequestRow>& requests) {
  std::array<MetricSamples, 3> out{{{"TTFT", {}, {}}, {"TPOT", {}, {}}, {"Latency", {}, {}}}};
  auto& [ttft, tpot, latency] = out;
  for (const MeasuredRequestRow& r : requests) {
    if (r.rejected) continue;
    ttft.measured.push_back(r.measured.ttft_s);
    ttft.simulated.push_back(r.simulated_ttft_s);
    latency.measured.push_back(r.measured.latency_s);
    latency.simulated.push_back(r.simulated_latency_s);
    if (r.measured.tpot_s && r.simulated_tpot_s) {
      tpot.measured.push_back(*r.measured.tpot_s);
      tpot.simulated.push_back(*r.simulated_tpot_s);
    }
  }
  return out;
}

double MeasuredTableRow::diff_pct() const {
  return measured_ms != 0 ? 100 * (simulated_ms - measured_ms) / measured_ms : 0;
}

std::optional<double> MeasuredTableRow::other_diff_pct() const {
  if (!other_ms || measured_ms == 0) return std::nullopt;
  return 100 * (*other_ms - measured_ms) / measured_ms;
}

std::string measured_table_text(const MeasuredReport& report) {
  const bool other = std::any_of(report.table.begin(), report.table.end(),
                                 [](const MeasuredTableRow& r) { return r.other_ms.has_value(); });
  std::string out = padded("Metric", 20, true) + padded("measured", 14, false) +
                    padded("infersim", 12, false) + padded("diff %", 10, false);
  if (other) out += padded("LLMServingSim", 15, false) + padded("diff %", 10, false);
  out += '\n';
  out += std::string(other ? 81 : 56, '-') + '\n';
  std::string group;
  for (const MeasuredTableRow& r : report.table) {
    if (!group.empty() && r.metric != group) out += '\n';
    group = r.metric;
    out += padded(r.metric + " " + r.statistic, 20, true) +
           padded(printf_text("%.1f", r.measured_ms), 14, false) +
           padded(printf_text("%.1f", r.simulated_ms), 12, false) +
           padded(printf_text("%+.1f%%", r.diff_pct()), 10, false);
    if (other) {
      out +=
          padded(r.other_ms ? printf_text("%.1f", *r.other_ms) : "-", 15, false) +
          padded(r.other_diff_pct() ? printf_text("%+.1f%%", *r.other_diff_pct()) : "-", 10, false);
    }
    out += '\n';
  }
  return out;
}

std::string measured_summary_text(const MeasuredReport& report) {
  std::string out;
  const MeasuredLoss& l = report.loss;
  const double total = l.total > 0 ? l.total : 1;
  out += "loss " + printf_text("%.6f", l.total) + " = TTFT " + printf_text("%.6f", l.ttft_term) +
         " (" + printf_text("%.1f", 100 * l.ttft_term / total) + " %, " +
         std::to_string(l.ttft_requests) + " requests, errors over the mean TTFT " +
         printf_text("%.1f", 1e3 * l.ttft_scale_s) + " ms) + TPOT " +
         printf_text("%.6f", l.tpot_term) + " (" + printf_text("%.1f", 100 * l.tpot_term / total) +
         " %, " + std::to_string(l.tpot_requests) + " requests)";
  if (l.figures_weight > 0) {
    out += " + figures " + printf_text("%.6f", l.figures_term) + " (" +
           printf_text("%.1f", 100 * l.figures_term / total) + " %, weight " +
           printf_text("%g", l.figures_weight) + ")";
  }
  out += '\n';
  std::vector<double> ttft, tpot;
  for (const MeasuredRequestRow& r : report.requests) {
    if (r.rejected) continue;
    if (r.measured.ttft_s > 0) {
      ttft.push_back(std::abs(r.simulated_ttft_s - r.measured.ttft_s) / r.measured.ttft_s);
    }
    if (r.measured.tpot_s && r.simulated_tpot_s && *r.measured.tpot_s > 0) {
      tpot.push_back(std::abs(*r.simulated_tpot_s - *r.measured.tpot_s) / *r.measured.tpot_s);
    }
  }
  const auto spread = [](std::vector<double>& v) {
    const auto p = percentiles(v, {0.5, 0.9});
    return "p50 " + printf_text("%.1f", 100 * p[0].value_or(0)) + " %, p90 " +
           printf_text("%.1f", 100 * p[1].value_or(0)) + " %";
  };
  out += "request by request, |simulated - measured| / measured: TTFT " + spread(ttft) + "; TPOT " +
         spread(tpot) + "\n";
  if (report.running_mean_abs_diff && report.waiting_mean_abs_diff) {
    out += "ticks of timeseries.csv (" + std::to_string(report.ticks.size()) +
           "): |running difference| " + printf_text("%.2f", *report.running_mean_abs_diff) +
           " requests on average, |waiting difference| " +
           printf_text("%.2f", *report.waiting_mean_abs_diff) + " (the stat logger started " +
           printf_text("%.3f", report.tick_offset_s.value_or(0)) + " s before the first arrival" +
           (report.tick_offset_s ? "" : ", assumed") + ")\n";
  }
  if (report.left_out > 0) {
    out += std::to_string(report.left_out) +
           " measured requests have no instants (never served) and are left out\n";
  }
  return out;
}

std::string measured_requests_csv(const MeasuredReport& report) {
  std::string out =
      "request,input_tokens,output_tokens,arrival_s,replica,measured_start_s,"
      "measured_first_token_s,measured_finish_s,simulated_start_s,simulated_first_token_s,"
      "simulated_finish_s,measured_ttft_s,simulated_ttft_s,measured_tpot_s,simulated_tpot_s,"
      "measured_latency_s,simulated_latency_s,preemptions,rejected\n";
  for (const MeasuredRequestRow& r : report.requests) {
    append_integer(out, static_cast<std::int64_t>(r.measured.request));
    out += ',';
    append_integer(out, r.measured.input_tokens);
    out += ',';
    append_integer(out, r.measured.output_tokens);
    cell(out, r.arrival_s);
    out += ',';
    if (!r.rejected) append_integer(out, r.replica);
    cell(out, r.measured.start_s);
    cell(out, r.measured.first_token_s);
    cell(out, r.measured.finish_s);
    const auto sim = [&](double v) { return r.rejected ? std::nullopt : std::optional(v); };
    cell(out, sim(r.simulated_start_s));
    cell(out, sim(r.simulated_first_token_s));
    cell(out, sim(r.simulated_finish_s));
    cell(out, r.measured.ttft_s);
    cell(out, sim(r.simulated_ttft_s));
    cell(out, r.measured.tpot_s);
    cell(out, r.rejected ? std::nullopt : r.simulated_tpot_s);
    cell(out, r.measured.latency_s);
    cell(out, sim(r.simulated_latency_s));
    out += ',';
    append_integer(out, r.preemptions);
    out += r.rejected ? ",1\n" : ",0\n";
  }
  return out;
}

std::string measured_ticks_csv(const MeasuredReport& report) {
  std::string out =
      "t_s,replay_s,measured_running,simulated_running,measured_waiting,simulated_waiting,"
      "measured_kv_pct,simulated_kv_pct\n";
  for (const MeasuredTickRow& t : report.ticks) {
    append_shortest(out, t.t_s);
    cell(out, t.replay_s);
    cell(out, t.measured_running);
    cell(out, t.simulated_running);
    cell(out, t.measured_waiting);
    cell(out, t.simulated_waiting);
    cell(out, t.measured_kv_pct);
    cell(out, t.simulated_kv_pct);
    out += '\n';
  }
  return out;
}

std::string measured_cdf_csv(const MeasuredReport& report) {
  std::vector<std::vector<double>> columns;
  for (const MetricSamples& g : served_samples(report.requests)) {
    columns.push_back(sorted(g.measured));
    columns.push_back(sorted(g.simulated));
  }
  std::string out =
      "fraction,measured_ttft_s,simulated_ttft_s,measured_tpot_s,simulated_tpot_s,"
      "measured_latency_s,simulated_latency_s\n";
  const std::size_t n = columns.front().size();
  if (n == 0) return out;
  const std::size_t points = std::min<std::size_t>(n, 1001);
  for (std::size_t i = 0; i < points; ++i) {
    const double q = points == 1 ? 1 : static_cast<double>(i) / static_cast<double>(points - 1);
    append_shortest(out, q);
    for (const std::vector<double>& c : columns) {
      out += ',';
      if (c.empty()) continue;
      const double index = static_cast<double>(c.size() - 1) * q;
      const auto below = static_cast<std::size_t>(std::floor(index));
      const std::size_t above = std::min(below + 1, c.size() - 1);
      append_shortest(out, interpolate(c[below], c[above], index));
    }
    out += '\n';
  }
  return out;
}

std::vector<PlotScript> measured_plot_scripts(const MeasuredReport& report) {
  std::vector<PlotScript> out;
  const struct {
    const char* name;
    const char* what;
    const char* column;
  } cdfs[] = {{"measured_ttft_cdf", "time to first token", "ttft"},
              {"measured_tpot_cdf", "time per output token", "tpot"},
              {"measured_latency_cdf", "latency", "latency"}};
  for (const auto& c : cdfs) {
    const std::string column = c.column;
    out.push_back(measured_plot(
        c.name, std::string("CDF of the ") + c.what + ", measured and simulated",
        std::string("The fraction of requests whose ") + c.what +
            " is at most x: the real run's against the replay's. Curves that lie on each "
            "other agree at every percentile.",
        "measured_cdf.csv",
        "set xlabel \"seconds\"\nset ylabel \"fraction of requests\"\nset yrange [0:1]\n", "lines",
        {{"measured_" + column + "_s", "fraction", "#222222", false, "measured"},
         {"simulated_" + column + "_s", "fraction", "#d0502a", true, "infersim"}}));
  }
  if (!report.ticks.empty()) {
    out.push_back(
        ticks_plot("measured_queue", "Running and waiting requests, measured and simulated",
                   "Requests running and waiting at the end of each tick of the real run's "
                   "timeseries.csv, against the replay's at the same instants.",
                   "requests",
                   {{"t_s", "measured_running", "#222222", false, "running, measured"},
                    {"t_s", "simulated_running", "#d0502a", true, "running, infersim"},
                    {"t_s", "measured_waiting", "#2a6fd0", false, "waiting, measured"},
                    {"t_s", "simulated_waiting", "#2aa05a", true, "waiting, infersim"}}));
    // A run that did not record its KV use (0 at every tick) has no measured
    // line to draw: the replay's alone, said so.
    if (kv_use_recorded(report)) {
      out.push_back(ticks_plot("measured_kv", "KV cache use, measured and simulated",
                               "The share of KV blocks in use at the end of each tick.",
                               "% of KV blocks",
                               {{"t_s", "measured_kv_pct", "#222222", false, "measured"},
                                {"t_s", "simulated_kv_pct", "#d0502a", true, "infersim"}}));
    } else {
      out.push_back(ticks_plot("measured_kv", "KV cache use, simulated",
                               "The share of KV blocks in use at the end of each tick of the "
                               "replay; the real run did not record its own.",
                               "% of KV blocks",
                               {{"t_s", "simulated_kv_pct", "#d0502a", true, "infersim"}}));
    }
  }
  return out;
}

std::vector<PlotScript> write_measured_report(const std::filesystem::path& dir,
                                              const MeasuredReport& report, bool plots,
                                              PlotRendering* rendering) {
  write_file_atomically(dir / "measured.csv", measured_requests_csv(report));
  write_file_atomically(dir / "measured_cdf.csv", measured_cdf_csv(report));
  write_file_atomically(dir / "measured_table.txt",
                        measured_table_text(report) + "\n" + measured_summary_text(report));
  if (!report.ticks.empty()) {
    write_file_atomically(dir / "measured_timeseries.csv", measured_ticks_csv(report));
  }
  if (!plots) return {};
  const std::vector<PlotScript> scripts = measured_plot_scripts(report);
  std::filesystem::create_directories(dir / "plots");
  for (const PlotScript& p : scripts)
    write_file_atomically(dir / "plots" / (p.name + ".gp"), p.script);
  PlotRendering r = render_plots(dir, scripts);
  if (rendering != nullptr) *rendering = std::move(r);
  return scripts;
}

RunSection measured_section(const MeasuredReport& report) {
  RunSection section;
  section.mode = "recorded";
  section.key = "measured";
  section.summary = measured_to_json(report);
  section.write_files = [&report](const std::filesystem::path& folder, bool plots,
                                  PlotRendering& rendering) {
    return write_measured_report(folder, report, plots, &rendering);
  };
  section.page.id = "measured";
  section.page.heading = "Against the measured run";
  section.page.html =
      "<p>" + html_escape(report.source) + ": " + html_escape(report.engine) + ", " +
      std::to_string(report.requests.size()) +
      " requests replayed at the engine's own arrivals. Times in milliseconds; diff % is "
      "(infersim − measured) / measured.</p>\n" +
      measured_table_html(report);
  return section;
}

bool kv_use_recorded(const MeasuredReport& report) {
  return std::any_of(report.ticks.begin(), report.ticks.end(), [](const MeasuredTickRow& t) {
    return t.measured_kv_pct && *t.measured_kv_pct > 0;
  });
}

nlohmann::ordered_json measured_to_json(const MeasuredReport& report) {
  nlohmann::ordered_json out;
  out["source"] = report.source;
  out["engine"] = report.engine;
  out["requests"] = report.requests.size();
  nlohmann::ordered_json table = nlohmann::ordered_json::array();
  for (const MeasuredTableRow& row : report.table) {
    nlohmann::ordered_json r;
    r["metric"] = row.metric;
    r["statistic"] = row.statistic;
    r["measured_ms"] = row.measured_ms;
    r["simulated_ms"] = row.simulated_ms;
    r["diff_pct"] = row.diff_pct();
    if (row.other_ms) {
      r["other_ms"] = *row.other_ms;
      r["other_diff_pct"] = *row.other_diff_pct();
    }
    table.push_back(std::move(r));
  }
  out["table"] = std::move(table);
  out["loss"] = report.loss.total;
  if (report.running_mean_abs_diff) out["running_mean_abs_diff"] = *report.running_mean_abs_diff;
  if (report.waiting_mean_abs_diff) out["waiting_mean_abs_diff"] = *report.waiting_mean_abs_diff;
  return out;
}

}  // namespace infersim
