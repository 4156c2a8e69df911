#include "report/report_html.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "report/number_format.hpp"

namespace infersim {
namespace {

enum class Unit { kCount, kPercent, kSeconds, kReqPerS, kTokPerS, kTokens, kWh, kMb };

struct Row {
  std::string label;
  std::string key;
  Unit unit;
};

std::optional<double> figure(const Summary& s, const std::string& key) {
  for (const Figure& f : s.figures()) {
    if (f.key == key) return f.value;
  }
  return std::nullopt;
}

bool has(const Summary& s, const std::string& key) {
  const auto& f = s.figures();
  return std::any_of(f.begin(), f.end(), [&](const Figure& x) { return x.key == key; });
}

std::string printed(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

// Seconds as a reader wants them: milliseconds below one second.
std::string seconds_text(double s) {
  const double magnitude = std::fabs(s);
  if (magnitude == 0) return "0 s";
  if (magnitude < 1) return printed("%.3g ms", s * 1000);
  if (magnitude < 100) return printed("%.3f s", s);
  return printed("%.1f s", s);
}

std::string value_text(double v, Unit unit, bool mean_of_runs) {
  switch (unit) {
    case Unit::kCount:
      return fixed(v, mean_of_runs ? 1 : 0);
    case Unit::kPercent:
      return fixed(v * 100, 2) + " %";
    case Unit::kSeconds:
      return seconds_text(v);
    case Unit::kReqPerS:
      return fixed(v, 3) + " req/s";
    case Unit::kTokPerS:
      return fixed(v, 1) + " tok/s";
    case Unit::kTokens:
      return fixed(v, 0);
    case Unit::kWh:
      return fixed(v, 2) + " Wh";
    case Unit::kMb:
      return fixed(v, 2) + " MB";
  }
  return fixed(v, 3);
}

std::string cell_text(const ModeResult& r, const Row& row) {
  const auto v = figure(r.summary, row.key);
  if (!v) return "n/a";
  const bool replicated = !r.replications.empty();
  std::string text = value_text(*v, row.unit, replicated);
  if (replicated) {
    if (const auto half = figure(r.ci95, row.key + "_ci95")) {
      text += " ± " + value_text(*half, row.unit, true);
    }
  }
  if (row.key == "success_rate") {
    if (const auto met = figure(r.summary, "deadline_met")) {
      text += " (" + fixed(*met, replicated ? 1 : 0) + ")";
    }
  }
  return text;
}

// The percentile keys of a metric the summary holds ("ttft_p50_s", ...), by
// increasing percentile.
std::vector<std::pair<double, std::string>> percentile_keys(const Summary& s,
                                                            const std::string& metric) {
  std::vector<std::pair<double, std::string>> out;
  const std::string prefix = metric + "_p";
  for (const Figure& f : s.figures()) {
    if (!f.key.starts_with(prefix) || !f.key.ends_with("_s")) continue;
    const std::string number = f.key.substr(prefix.size(), f.key.size() - prefix.size() - 2);
    double p = 0;
    const auto r = std::from_chars(number.data(), number.data() + number.size(), p);
    if (r.ec == std::errc() && r.ptr == number.data() + number.size()) out.emplace_back(p, f.key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Group {
  std::string title;
  std::vector<Row> rows;
};

std::vector<Group> table_groups(const Summary& first) {
  std::vector<Group> groups = {
      {"Load",
       {{"Requests simulated", "requests", Unit::kCount},
        {"Dropped (arrived after the run's end)", "dropped", Unit::kCount},
        {"Benchmark duration (first arrival to last response)", "benchmark_duration_s",
         Unit::kSeconds},
        {"Request throughput", "request_throughput_rps", Unit::kReqPerS},
        {"Output token throughput", "output_throughput_tps", Unit::kTokPerS},
        {"Total token throughput", "total_token_throughput_tps", Unit::kTokPerS},
        {"Peak concurrent requests", "max_concurrent_requests", Unit::kCount}}},
      {"Deadlines",
       {{"Requests that met their deadline", "success_rate", Unit::kPercent},
        {"Good requests (every goodput bound met)", "good_request_fraction", Unit::kPercent},
        {"Goodput", "goodput_rps", Unit::kReqPerS},
        {"Average makespan of the requests that met it", "avg_makespan_ok_s", Unit::kSeconds}}},
  };
  const std::pair<const char*, const char*> metrics[] = {
      {"wait", "Waiting for a core"},
      {"ttft", "Time to first token (TTFT)"},
      {"tpot", "Time per output token (TPOT)"},
      {"e2el", "End-to-end latency (E2E)"},
  };
  Group latency{"Latency", {}};
  for (const auto& [metric, label] : metrics) {
    latency.rows.push_back(
        {std::string(label) + ", mean", std::string(metric) + "_mean_s", Unit::kSeconds});
    for (const auto& [p, key] : percentile_keys(first, metric)) {
      latency.rows.push_back({std::string(label) + ", p" + shortest(p), key, Unit::kSeconds});
    }
  }
  groups.push_back(latency);
  groups.push_back({"Server",
                    {{"Edge CPU utilization", "utilization", Unit::kPercent},
                     {"Total compute executed", "compute_s", Unit::kSeconds},
                     {"Total time spent waiting", "waiting_total_s", Unit::kSeconds},
                     {"Total traffic", "traffic_mb", Unit::kMb},
                     {"Energy of the run", "energy_wh", Unit::kWh}}});
  for (Group& g : groups) {
    std::erase_if(g.rows, [&](const Row& r) { return !has(first, r.key); });
  }
  return groups;
}

std::string mode_title(const ModeResult& r, const std::string& synthetic_arrivals) {
  if (r.mode == "recorded") return "Recorded trace";
  std::string title = "Synthetic " + synthetic_arrivals;
  if (!r.replications.empty()) {
    title += " (mean ± 95 % CI of " + std::to_string(r.replications.size()) + " seeds)";
  }
  return title;
}

std::string figures_table(const std::vector<const ModeResult*>& results,
                          const std::string& synthetic_arrivals) {
  const bool compare = results.size() == 2;
  std::string out = "<table class=\"figures\">\n<thead><tr><th>Figure</th>";
  for (const ModeResult* r : results)
    out += "<th>" + html_escape(mode_title(*r, synthetic_arrivals)) + "</th>";
  if (compare) out += "<th>Recorded / synthetic</th>";
  out += "</tr></thead>\n<tbody>\n";
  const std::size_t columns = results.size() + (compare ? 2 : 1);
  for (const Group& g : table_groups(results.front()->summary)) {
    if (g.rows.empty()) continue;
    out += "<tr class=\"group\"><th colspan=\"" + std::to_string(columns) + "\">" +
           html_escape(g.title) + "</th></tr>\n";
    for (const Row& row : g.rows) {
      out += "<tr><th scope=\"row\">" + html_escape(row.label) + "</th>";
      for (const ModeResult* r : results)
        out += "<td>" + html_escape(cell_text(*r, row)) + "</td>";
      if (compare) {
        const auto a = figure(results[0]->summary, row.key);
        const auto b = figure(results[1]->summary, row.key);
        std::string ratio = "n/a";
        if (a && b && *b != 0) ratio = fixed(*a / *b, std::fabs(*a / *b) >= 100 ? 0 : 3);
        out += "<td class=\"ratio\">" + ratio + "</td>";
      }
      out += "</tr>\n";
    }
  }
  return out + "</tbody>\n</table>\n";
}

// Every figure of summary.json, by key, for the reader who wants them all.
std::string all_figures_table(const std::vector<const ModeResult*>& results) {
  std::string out = "<table class=\"all\">\n<thead><tr><th>key</th>";
  for (const ModeResult* r : results)
    out += "<th>" + html_escape(r->mode) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  std::vector<std::string> keys;
  for (const ModeResult* r : results) {
    for (const auto* s : {&r->summary, &r->ci95}) {
      for (const Figure& f : s->figures()) {
        if (std::find(keys.begin(), keys.end(), f.key) == keys.end()) keys.push_back(f.key);
      }
    }
  }
  for (const std::string& key : keys) {
    out += "<tr><th scope=\"row\"><code>" + html_escape(key) + "</code></th>";
    for (const ModeResult* r : results) {
      auto v = figure(r->summary, key);
      if (!v) v = figure(r->ci95, key);
      out += "<td>" + (v ? shortest(*v) : std::string("null")) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string json_text(const nlohmann::ordered_json& settings, const char* section, const char* key,
                      const std::string& otherwise = "") {
  if (!settings.is_object() || !settings.contains(section) || !settings[section].is_object() ||
      !settings[section].contains(key)) {
    return otherwise;
  }
  const auto& v = settings[section][key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return otherwise;
  if (v.is_number()) return shortest(v.get<double>());
  return v.dump();
}

const TimeSlice* busiest_slice(const ModeResult& r) {
  const TimeSlice* best = nullptr;
  for (const TimeSlice& s : r.time_series.slices) {
    if (best == nullptr || s.arrivals > best->arrivals) best = &s;
  }
  return best;
}

std::string reading_guide(const std::vector<const ModeResult*>& results,
                          const std::string& synthetic_arrivals) {
  const ModeResult* recorded = nullptr;
  const ModeResult* synthetic = nullptr;
  for (const ModeResult* r : results)
    (r->mode == "recorded" ? recorded : synthetic) = r;
  std::string out = "<h3>The columns</h3>\n<p>";
  if (recorded) {
    out += "<b>Recorded trace</b> replays the trace's own arrival times and sizes. ";
  }
  if (synthetic) {
    out += "<b>Synthetic " + html_escape(synthetic_arrivals) +
           "</b> keeps the run length, the fleet, the server and every knob, and draws arrivals "
           "at the trace's mean rate, so it carries about the same work";
    out += synthetic_arrivals == "poisson" ? " as a Poisson benchmark would. " : ". ";
  }
  if (recorded && synthetic) {
    out +=
        "The last column divides the first by the second: above 1, the recorded trace has "
        "more of it.";
  }
  out +=
      "</p>\n<dl>\n"
      "<dt>Waiting for a core</dt><dd>from the request's arrival at the server to the start of "
      "its execution on a core.</dd>\n"
      "<dt>TTFT</dt><dd>time to first token: from the request's issue to its first generated "
      "token reaching the device.</dd>\n"
      "<dt>TPOT</dt><dd>time per output token after the first: (E2E − TTFT) / (generated "
      "tokens − 1), over the requests that generate more than one token.</dd>\n"
      "<dt>E2E latency</dt><dd>from issue to the whole response at the device (the "
      "makespan).</dd>\n"
      "<dt>pNN</dt><dd>the NN-th percentile: NN % of the requests took at most this "
      "long.</dd>\n"
      "<dt>Deadline</dt><dd>TTFT budget + decode budget × generated tokens; a request meets "
      "it when its E2E latency is within.</dd>\n"
      "<dt>Goodput</dt><dd>requests per second that met every bound given with "
      "<code>--goodput</code> (only when given).</dd>\n"
      "<dt>Throughputs</dt><dd>over the benchmark duration, from the first arrival to the "
      "last response, as vLLM's benchmark measures them.</dd>\n"
      "<dt>Peak concurrent requests</dt><dd>the most requests in flight at once, between "
      "issue and response.</dd>\n"
      "<dt>Utilization and energy</dt><dd>busy core-time over the cores' time, and the "
      "server's idle power plus its dynamic share, plus the devices' radios.</dd>\n"
      "</dl>\n";
  if (recorded) {
    const TimeSlice* peak = busiest_slice(*recorded);
    const double slice_s = recorded->time_series.slice.seconds();
    const double run_s = recorded->run_length.seconds();
    const double mean =
        run_s > 0 ? static_cast<double>(recorded->tasks.size()) / run_s * slice_s : 0;
    out += "<h3>What a burst does</h3>\n<p>";
    if (peak != nullptr && mean > 0) {
      out += "The recorded requests do not come evenly: in its busiest " + shortest(slice_s) +
             " s slice, from " + fixed(peak->start.seconds(), 0) + " s, " +
             std::to_string(peak->arrivals) + " requests arrived, against a mean of " +
             fixed(mean, 1) + " a slice. ";
    }
    out +=
        "While a burst lasts, requests arrive faster than the cores finish them: the queue "
        "grows (the queue plot), every request behind it waits, and the deadlines of the "
        "slices that follow are missed (the miss-rate plot), although over the whole run the "
        "cores are busy only " +
        (figure(recorded->summary, "utilization")
             ? fixed(*figure(recorded->summary, "utilization") * 100, 0) + " %"
             : std::string("part")) +
        " of the time. ";
    if (synthetic) {
      out +=
          "Arrivals drawn at the same mean rate carry the same work but seldom pile up, so "
          "their waits stay short: a capacity study on them would find headroom that the "
          "recorded traffic does not leave.";
    }
    out += "</p>\n";
  }
  out +=
      "<h3>The files</h3>\n<p><code>summary.json</code> and <code>summary.csv</code> hold "
      "every figure; <code>timeseries.csv</code> the slices the plots draw (arrivals, "
      "completions and deadline misses by response, queue length, busy cores, utilization, "
      "energy, the 99th percentile of the waits starting in the slice); <code>cdf.csv</code> "
      "the distributions of waiting time and TTFT; <code>plots/*.gp</code> the gnuplot "
      "scripts, which <code>gnuplot plots/*.gp</code> in the run folder renders again after "
      "an edit.</p>\n";
  return out;
}

constexpr const char* kStyle = R"(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       margin: 0 auto; max-width: 1040px; padding: 24px 28px 48px; color: #1d2329; line-height: 1.45;
       background: #ffffff; }
h1 { font-size: 1.7rem; margin: 0 0 4px; }
h2 { font-size: 1.3rem; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 2px solid #e3e6ea; }
h3 { font-size: 1.05rem; margin: 20px 0 6px; }
p.meta { color: #58616b; margin: 0 0 8px; font-size: 0.92rem; }
nav a { margin-right: 14px; color: #2471a3; text-decoration: none; font-size: 0.92rem; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.9em;
       background: #f3f5f7; padding: 0 3px; border-radius: 3px; }
table { border-collapse: collapse; width: 100%; font-size: 0.93rem; }
th, td { padding: 5px 10px; border-bottom: 1px solid #e8eaed; text-align: right; }
th[scope=row], thead th:first-child { text-align: left; font-weight: normal; }
thead th { background: #f3f5f7; font-weight: 600; border-bottom: 2px solid #d5d9de; }
tr.group th { text-align: left; background: #fafbfc; font-weight: 600; color: #3b4550;
              padding-top: 10px; }
td { font-variant-numeric: tabular-nums; white-space: nowrap; }
td.ratio { color: #58616b; }
figure { margin: 18px 0 26px; }
figure svg { width: 100%; height: auto; display: block; border: 1px solid #eceef1; }
figcaption { color: #3b4550; font-size: 0.92rem; margin-top: 6px; }
figure.missing { padding: 12px; border: 1px dashed #c8cdd3; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; font-size: 0.95rem; }
dt { font-weight: 600; }
dd { margin: 0; }
details summary { cursor: pointer; color: #2471a3; }
table.all td, table.all th { font-size: 0.85rem; padding: 3px 8px; }
)";

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string inline_svg(const std::string& svg, const std::string& id_prefix,
                       const std::string& title) {
  std::string out = svg;
  // The XML prologue (and a doctype, should one be there) has no place in HTML.
  const auto root = out.find("<svg");
  if (root != std::string::npos) out.erase(0, root);
  // gnuplot names its definitions gp...; each plot gets its own.
  for (const std::string token : {"gnuplot_canvas", "gpPt", "gpDot", "gpPat", "gpBkgd", "gpClip"}) {
    const std::string renamed = id_prefix + token;
    for (auto at = out.find(token); at != std::string::npos;
         at = out.find(token, at + renamed.size())) {
      out.replace(at, token.size(), renamed);
    }
  }
  const auto open = out.find("<title>");
  const auto close = out.find("</title>");
  if (open != std::string::npos && close != std::string::npos && open < close) {
    out.replace(open + 7, close - open - 7, html_escape(title));
  }
  return out;
}

std::string report_html(const nlohmann::ordered_json& settings,
                        const std::vector<const ModeResult*>& results,
                        const std::vector<ReportFigure>& figures, const std::string& plots_note) {
  const std::string arrivals = json_text(settings, "synthetic", "arrivals", "poisson");
  const std::string trace = json_text(settings, "trace", "path", "?");
  const std::string mode = json_text(settings, "run", "mode", results.size() == 2 ? "compare" : "");
  const std::string digest = json_text(settings, "trace", "sha256");
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>Run report: " +
      html_escape(mode + ", " + trace) + "</title>\n<style>" + kStyle +
      "</style>\n</head>\n<body>\n";
  page += "<header>\n<h1>Run report</h1>\n<p class=\"meta\">Trace <code>" + html_escape(trace) +
          "</code>" +
          (digest.size() >= 12 ? " (SHA-256 " + html_escape(digest.substr(0, 12)) + "…)" : "") +
          ", mode <b>" + html_escape(mode) + "</b>, " +
          html_escape(json_text(settings, "run", "devices", "?")) + " devices, " +
          html_escape(json_text(settings, "server", "cores", "?")) + " cores of " +
          html_escape(json_text(settings, "server", "mips_per_core", "?")) + " MIPS, seed " +
          html_escape(json_text(settings, "run", "seed", "?")) + ".</p>\n<p class=\"meta\">" +
          html_escape(json_text(settings, "meta", "program", "infersim") + " " +
                      json_text(settings, "meta", "version")) +
          (settings.contains("meta")
               ? ", written " + html_escape(json_text(settings, "meta", "written_at"))
               : std::string()) +
          ". Every setting is in <code>settings.json</code>; <code>infersim run --settings "
          "settings.json</code> runs it again.</p>\n"
          "<nav><a href=\"#figures\">Figures</a><a href=\"#time\">Over time</a>"
          "<a href=\"#distributions\">Distributions</a><a href=\"#guide\">Reading guide</a>"
          "<a href=\"#all\">Every figure</a></nav>\n</header>\n";

  page += "<section id=\"figures\">\n<h2>Figures</h2>\n";
  if (!results.empty()) page += figures_table(results, arrivals);
  page += "</section>\n";

  auto figure_html = [&](const ReportFigure& f, std::size_t index) {
    std::string out = "<figure id=\"plot-" + html_escape(f.name) + "\"";
    if (f.svg.empty()) {
      out +=
          " class=\"missing\"><p>Not rendered. Run <code>gnuplot plots/*.gp</code> in the run "
          "folder, then reload this page.</p><img src=\"plots/" +
          html_escape(f.name) + ".svg\" alt=\"" + html_escape(f.title) + "\">";
    } else {
      out += ">\n" + inline_svg(f.svg, "p" + std::to_string(index) + "-", f.title);
    }
    return out + "\n<figcaption><b>" + html_escape(f.title) + ".</b> " + html_escape(f.caption) +
           " <span class=\"source\">(<code>plots/" + html_escape(f.name) +
           ".gp</code>)</span></figcaption>\n</figure>\n";
  };
  std::string over_time, distributions;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const bool cdf = figures[i].name.ends_with("_cdf");
    (cdf ? distributions : over_time) += figure_html(figures[i], i);
  }
  const std::string none =
      "<p>" + html_escape(plots_note.empty() ? "No plots in this run." : plots_note) + "</p>\n";
  page += "<section id=\"time\">\n<h2>Over time</h2>\n" + (over_time.empty() ? none : over_time) +
          "</section>\n";
  page += "<section id=\"distributions\">\n<h2>Distributions</h2>\n" +
          (distributions.empty() ? none : distributions) + "</section>\n";
  page += "<section id=\"guide\">\n<h2>Reading guide</h2>\n" + reading_guide(results, arrivals) +
          "</section>\n";
  page +=
      "<section id=\"all\">\n<h2>Every figure</h2>\n<details>\n<summary>The keys of "
      "<code>summary.json</code>, as written</summary>\n" +
      all_figures_table(results) + "</details>\n</section>\n</body>\n</html>\n";
  return page;
}

}  // namespace infersim
