#include "report/report_html.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/number_format.hpp"
#include "report/attribution.hpp"
#include "report/figure_text.hpp"
#include "report/load_verdict.hpp"

namespace infersim {
namespace {

// The numbers a JSON value holds, at any depth.
std::size_t numbers_in(const nlohmann::ordered_json& v) {
  if (v.is_number()) return 1;
  std::size_t n = 0;
  if (v.is_structured()) {
    for (const auto& part : v)
      n += numbers_in(part);
  }
  return n;
}

struct Group {
  std::string title;
  std::vector<FigureRow> rows;
};

FigureRow row_of(const std::string& key, const ServerDescription& server) {
  return {figure_label(key, server), key, figure_unit(key)};
}

std::vector<Group> table_groups(const ModeResult& first_mode) {
  const Summary& first = first_mode.summary;
  const ServerDescription& server = first_mode.server;
  auto rows = [&](const std::vector<std::string>& keys) {
    std::vector<FigureRow> out;
    for (const std::string& key : keys)
      out.push_back(row_of(key, server));
    return out;
  };
  std::vector<Group> groups = {
      {"Load",
       rows({"requests", "dropped", "rejected", "benchmark_duration_s", "request_throughput_rps",
             "output_throughput_tps", "peak_output_throughput_tps", "total_token_throughput_tps",
             "max_concurrent_requests", "max_concurrency", "mean_in_flight",
             "output_throughput_per_user_tps", "output_throughput_per_gpu_tps"})},
      {"Deadlines", rows({"success_rate", "avg_budget_s", "avg_makespan_ok_s",
                          "good_request_fraction", "goodput_rps"})},
  };
  Group latency{"Latency", {}};
  for (const char* metric : {"wait", "ttft", "tpot", "itl", "e2el"}) {
    const std::string mean = std::string(metric) + "_mean_s";
    if (!holds(first, mean)) continue;
    latency.rows.push_back(row_of(mean, server));
    for (const auto& [p, key] : percentile_keys(first, metric))
      latency.rows.push_back(row_of(key, server));
  }
  groups.push_back(latency);
  for (const FigureGroup& g : server.figure_groups)
    groups.push_back({g.title, rows(g.keys)});
  for (Group& g : groups) {
    std::erase_if(g.rows, [&](const FigureRow& r) { return !holds(first, r.key); });
  }
  return groups;
}

std::string figures_html_table(const std::vector<const ModeResult*>& results) {
  const bool compare = results.size() == 2;
  std::string out = "<table class=\"figures\">\n<thead><tr><th>Figure</th>";
  for (const ModeResult* r : results)
    out += "<th>" + html_escape(column_title(*r)) + "</th>";
  if (compare) out += "<th>Recorded / synthetic</th>";
  out += "</tr></thead>\n<tbody>\n";
  const std::size_t columns = results.size() + (compare ? 2 : 1);
  for (const Group& g : table_groups(*results.front())) {
    if (g.rows.empty()) continue;
    out += "<tr class=\"group\"><th colspan=\"" + std::to_string(columns) + "\">" +
           html_escape(g.title) + "</th></tr>\n";
    for (const FigureRow& row : g.rows) {
      out += "<tr data-key=\"" + html_escape(row.key) + "\"><th scope=\"row\">" +
             html_escape(row.label) + "</th>";
      for (const ModeResult* r : results)
        out += "<td>" + html_escape(figure_cell(*r, row)) + "</td>";
      if (compare) {
        out += "<td class=\"ratio\">" +
               ratio_text(figure_value(results[0]->summary, row.key),
                          figure_value(results[1]->summary, row.key)) +
               "</td>";
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
      auto v = figure_value(r->summary, key);
      if (!v) v = figure_value(r->ci95, key);
      out += "<td>" + (v ? shortest(*v) : std::string("null")) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

const nlohmann::ordered_json* json_at(const nlohmann::ordered_json& settings, const char* section,
                                      const char* key) {
  if (!settings.is_object() || !settings.contains(section) || !settings[section].is_object() ||
      !settings[section].contains(key)) {
    return nullptr;
  }
  return &settings[section][key];
}

std::string json_text(const nlohmann::ordered_json& settings, const char* section, const char* key,
                      const std::string& otherwise = "") {
  const nlohmann::ordered_json* v = json_at(settings, section, key);
  if (v == nullptr || v->is_null()) return otherwise;
  if (v->is_string()) return v->get<std::string>();
  if (v->is_boolean()) return v->get<bool>() ? "on" : "off";
  if (v->is_number()) return shortest(v->get<double>());
  return v->dump();
}

std::optional<double> json_number(const nlohmann::ordered_json& settings, const char* section,
                                  const char* key) {
  const nlohmann::ordered_json* v = json_at(settings, section, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

// The fleet class by class, as the server describes its classes: what each
// is, and each mode's hours, utilization and cost of it. "" without a fleet.
std::string fleet_table(const std::vector<const ModeResult*>& results) {
  if (results.empty() || results.front()->server.classes.empty()) return "";
  std::string out =
      "<h3>The fleet, class by class</h3>\n<table class=\"figures\" id=\"fleet\">\n<thead><tr>"
      "<th>Class</th><th>Preset</th><th>Replicas</th><th>$ a GPU-hour</th>";
  for (const ModeResult* r : results) {
    const std::string t = html_escape(column_title(*r));
    out += "<th>" + t + ": replica-hours</th><th>utilization</th><th>cost ($)</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const ClassDescription& c : results.front()->server.classes) {
    const auto usage_of = [&](const ModeResult& r) {
      return std::find_if(r.classes.begin(), r.classes.end(),
                          [&](const ClassUsage& u) { return u.name == c.name; });
    };
    // "4" or "1 to 8, autoscaled from 2": its count as the server runs it.
    std::string count = "?";
    for (const KnobRow& row : c.knobs)
      if (row.key == "replicas" && row.value) count = *row.value;
    const auto first = usage_of(*results.front());
    const std::string price =
        first == results.front()->classes.end() ? "?" : shortest(first->price_per_gpu_hour);
    // A disaggregated fleet's class says its side (BATCHING.md section 12).
    const std::string role = c.role.empty() ? std::string() : " (" + c.role + ")";
    out += "<tr data-class=\"" + html_escape(c.name) + "\"><th scope=\"row\">" +
           html_escape(c.name + role) + "</th><td>" +
           html_escape(c.preset.empty() ? "none" : c.preset) + "</td><td>" + html_escape(count) +
           "</td><td>" + price + "</td>";
    for (const ModeResult* r : results) {
      const auto it = usage_of(*r);
      if (it == r->classes.end()) {
        out += "<td>n/a</td><td>n/a</td><td>n/a</td>";
        continue;
      }
      out += "<td>" + figure_text(it->replica_hours, FigureUnit::kDecimal) + "</td><td>" +
             (it->utilization ? figure_text(*it->utilization, FigureUnit::kShare) : "n/a") +
             "</td><td>" + figure_text(it->cost_usd, FigureUnit::kDecimal) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

const TimeSlice* busiest_slice(const ModeResult& r) {
  const TimeSlice* best = nullptr;
  for (const TimeSlice& s : r.time_series.slices) {
    if (best == nullptr || s.arrivals > best->arrivals) best = &s;
  }
  return best;
}

// A mode's verdict: whether its requests met their deadlines (at least 99 %
// of them), by how much they missed, and whether its server kept up.
std::string verdict_html(const ModeResult& r, const nlohmann::ordered_json& settings) {
  const Summary& s = r.summary;
  const bool replicated = !r.replications.empty();
  const LoadVerdict load = assess_load(r);
  // Every figure the verdict shows against its target, each met or missed:
  // the verdict is met only when all are.
  struct Check {
    std::string missed;  // said in the heading when not met
    bool met;
    std::string text;
  };
  std::vector<Check> checks;
  const double share = figure_value(s, "success_rate").value_or(0);
  const std::string count = fixed(figure_value(s, "requests").value_or(0), replicated ? 1 : 0);
  if (share >= kMetShare) {
    checks.push_back({"deadlines missed", true,
                      fixed(share * 100, 2) + " % of the " + count +
                          " requests met their deadline (the verdict asks for 99 %)."});
  } else {
    checks.push_back(
        {"deadlines missed", false,
         fixed((1 - share) * 100, 2) + " % of the " + count + " requests missed their deadline (" +
             fixed(figure_value(s, "deadline_missed").value_or(0), replicated ? 1 : 0) +
             "); the verdict asks for 99 % within it."});
  }
  const auto ttft_p99 = figure_value(s, "ttft_p99_s");
  const auto ttft_budget = json_number(settings, "deadline", "ttft_budget_s");
  if (ttft_p99 && ttft_budget && *ttft_budget > 0) {
    const bool within = *ttft_p99 <= *ttft_budget;
    checks.push_back({"TTFT p99 over its budget", within,
                      "TTFT, p99: " + duration_text(*ttft_p99) +
                          (within ? ", within the " + duration_text(*ttft_budget) + " TTFT budget"
                                  : ", " + fixed(*ttft_p99 / *ttft_budget, 1) + " times the " +
                                        duration_text(*ttft_budget) + " TTFT budget") +
                          "."});
  }
  const auto e2el = figure_value(s, "e2el_mean_s");
  const auto budget = figure_value(s, "avg_budget_s");
  if (e2el && budget) {
    checks.push_back({"mean latency over its budget", *e2el <= *budget,
                      "E2E latency, mean over all requests: " + duration_text(*e2el) +
                          " against a mean deadline budget of " + duration_text(*budget) +
                          (*e2el > *budget ? " (" + fixed(*e2el / *budget, 1) + " times it)" : "") +
                          "."});
  }
  if (const auto good = figure_value(s, "good_request_fraction")) {
    checks.push_back({"goodput below 99 %", *good >= kMetShare,
                      fixed(*good * 100, 2) + " % of the requests met every goodput bound (" +
                          json_text(settings, "report", "goodput") +
                          "; the verdict asks for 99 %)."});
  }
  const std::string refused = rejection_text(r);
  if (!refused.empty()) checks.push_back({"most requests refused", false, refused + "."});
  if (load.overloaded) {
    checks.push_back({"overloaded", false,
                      "Overloaded: its server did not keep up (the banner above has the "
                      "figures)."});
  } else if (load.offered_load) {
    checks.push_back({"overloaded", true,
                      "Kept up: the requests ask " + fixed(*load.offered_load, 2) +
                          " times what the " + units_text(r) +
                          " can do, and the last response came " + duration_text(load.drain_s) +
                          " after the last arrival."});
  } else if (!r.tasks.empty()) {
    checks.push_back(
        {"overloaded", true,
         "Kept up: the last response came " + duration_text(load.drain_s) +
             " after the last arrival" +
             (load.busy_while_arriving
                  ? "; " +
                        busy_units_text(
                            r, r.replications.empty() ? r.summary : r.replications.front()) +
                        " busy " + fixed(*load.busy_while_arriving * 100, 1) +
                        " % of the time until then"
                  : std::string()) +
             "."});
  }
  std::string missed;
  for (const Check& c : checks) {
    if (!c.met) missed += (missed.empty() ? "" : ", ") + c.missed;
  }
  std::string out = std::string("<div class=\"verdict ") + (missed.empty() ? "met" : "missed") +
                    "\" data-mode=\"" + html_escape(r.mode) + "\">\n<h3>" +
                    html_escape(column_title(r)) + ": " +
                    (missed.empty() ? "every target met" : html_escape(missed)) + "</h3>\n<ul>\n";
  for (const Check& c : checks) {
    out += std::string("<li class=\"") + (c.met ? "ok" : "miss") + "\">" + (c.met ? "✓ " : "✗ ") +
           html_escape(c.text) + "</li>\n";
  }
  return out + "</ul>\n</div>\n";
}

// The budgets and the knobs that produced the run, as settings.json has them.
std::string knobs_html(const nlohmann::ordered_json& settings, const ServerDescription& server,
                       bool synthetic) {
  std::vector<std::pair<std::string, std::vector<KnobRow>>> groups = {
      {"Deadline",
       {{"TTFT budget (before the first token)", "deadline", "ttft_budget_s", " s"},
        {"Decode budget (a generated token)", "deadline", "decode_budget_s", " s"},
        {"Goodput bounds (ms)", "report", "goodput", ""}}},
      {server.knob_title, server.knobs},
  };
  groups.push_back({"Workload",
                    {{"Devices issuing the requests", "run", "devices", ""},
                     {"Bytes a token", "tokens", "bytes_per_token", ""},
                     {"Arrival clock (0: exact)", "run", "time_resolution_s", " s"},
                     {"Time scale", "run", "time_scale", ""},
                     {"Replay window from", "run", "start_offset_s", " s"},
                     {"Replay window to", "run", "end_offset_s", " s"},
                     {"Longest idle gap", "run", "max_idle_gap_s", " s"},
                     {"Run length", "run", "duration_s", " s"},
                     {"Seed", "run", "seed", ""}}});
  if (synthetic) {
    auto& workload = groups.back().second;
    workload.push_back({"Synthetic arrivals", "synthetic", "arrivals", ""});
    if (json_text(settings, "synthetic", "arrivals") == "gamma") {
      workload.push_back({"Synthetic burstiness (gamma shape)", "synthetic", "burstiness", ""});
    }
    workload.push_back({"Synthetic sizes", "synthetic", "sizes", ""});
    workload.push_back({"Synthetic replications", "synthetic", "replications", ""});
  }
  std::string out = "<table class=\"knobs\">\n<tbody>\n";
  for (const auto& [title, knobs] : groups) {
    out += "<tr class=\"group\"><th colspan=\"2\">" + html_escape(title) + "</th></tr>\n";
    for (const KnobRow& k : knobs) {
      if (k.value) {
        // The value the server runs with, as it says.
        out += "<tr><th scope=\"row\">" + html_escape(k.label) + " <code>" + k.section + "." +
               k.key + "</code></th><td>" + html_escape(*k.value) + "</td></tr>\n";
        continue;
      }
      const char* section = k.section.c_str();
      const nlohmann::ordered_json* v = json_at(settings, section, k.key.c_str());
      if (v == nullptr) continue;
      std::string value;
      if (v->is_null()) {
        value = "none";
      } else if (v->is_object()) {
        // A bound a name (goodput's); a part of a table by its size alone.
        for (const auto& [name, part] : v->items()) {
          value += (value.empty() ? "" : ", ") + name + " " +
                   (part.is_structured() ? "(" + std::to_string(numbers_in(part)) + " numbers)"
                    : part.is_number()   ? shortest(part.get<double>())
                                         : part.dump());
        }
      } else {
        value = json_text(settings, section, k.key.c_str()) + k.unit;
      }
      if (!k.paired_key.empty()) {
        value += " / " + json_text(settings, section, k.paired_key.c_str()) + k.paired_unit;
      }
      out += "<tr><th scope=\"row\">" + html_escape(k.label) + " <code>" + k.section + "." + k.key +
             "</code></th><td>" + html_escape(value) + "</td></tr>\n";
    }
  }
  return out + "</tbody>\n</table>\n";
}

// A fleet's classes side by side, each knob as its replicas run it ("" without
// a fleet).
std::string class_knobs_html(const ServerDescription& server) {
  if (server.classes.empty()) return "";
  std::vector<std::pair<std::string, std::string>> rows;  // label, key, in the first class's order
  for (const ClassDescription& c : server.classes) {
    for (const KnobRow& k : c.knobs) {
      if (std::none_of(rows.begin(), rows.end(), [&](const auto& r) { return r.first == k.label; }))
        rows.emplace_back(k.label, k.key);
    }
  }
  std::string out =
      "<h3>Each class's engine</h3>\n<table class=\"knobs\" id=\"class-knobs\">\n<thead><tr>"
      "<th>Knob of a class <code>batching.fleet[i]</code></th>";
  for (const ClassDescription& c : server.classes) {
    out += "<th data-class=\"" + html_escape(c.name) + "\">" +
           html_escape(c.name + (c.role.empty() ? "" : " (" + c.role + ")")) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    // Named apart, not bound: a structured binding is not captured below.
    const std::string& label = row.first;
    const std::string& key = row.second;
    out += "<tr data-knob=\"" + html_escape(key) + "\"><th scope=\"row\">" + html_escape(label) +
           " <code>" + html_escape(key) + "</code></th>";
    for (const ClassDescription& c : server.classes) {
      const auto it = std::find_if(c.knobs.begin(), c.knobs.end(),
                                   [&](const KnobRow& k) { return k.label == label; });
      out += "<td>" + (it == c.knobs.end() || !it->value ? "" : html_escape(*it->value)) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string reading_guide(const std::vector<const ModeResult*>& results,
                          const ModeResult* retimed) {
  const ModeResult* recorded = nullptr;
  const ModeResult* synthetic = nullptr;
  for (const ModeResult* r : results)
    (r->mode == "recorded" ? recorded : synthetic) = r;
  const ModeResult& first = *results.front();
  const ServerDescription& server = first.server;
  const auto terms = [](const std::vector<Term>& list) {
    std::string text;
    for (const Term& t : list)
      text += "<dt>" + html_escape(t.name) + "</dt><dd>" + html_escape(t.meaning) + "</dd>\n";
    return text;
  };
  std::string out = "<h3>The columns</h3>\n<p>";
  if (recorded) {
    out += "<b>Recorded trace</b> replays the trace's own arrival times and sizes. ";
  }
  if (synthetic) {
    out += "<b>" + html_escape(mode_title(*synthetic)) +
           "</b> keeps the run length, the fleet, the server and every knob, and draws arrivals "
           "at the trace's mean rate, so it carries about the same work";
    out += synthetic->arrivals.empty() || synthetic->arrivals == "poisson"
               ? " as a Poisson benchmark would. "
               : ". ";
  }
  if (recorded && synthetic) {
    out +=
        "The last column divides the first by the second: above 1, the recorded trace has "
        "more of it.";
  }
  out += "</p>\n<dl>\n<dt>" + html_escape(server.wait_name) +
         "</dt><dd>from the request's arrival at the " + html_escape(server.wait_meaning) +
         "</dd>\n"
         "<dt>TTFT</dt><dd>time to first token: from the request's issue to its first generated "
         "token reaching the device.</dd>\n"
         "<dt>TPOT</dt><dd>time per output token after the first: (E2E − TTFT) / (generated "
         "tokens − 1), over the requests that generate more than one token.</dd>\n";
  out += terms(server.latency_terms);
  out +=
      "<dt>E2E latency</dt><dd>from issue to the whole response at the device (the "
      "makespan); its mean is over every request, and a second mean over those that met "
      "their deadline.</dd>\n"
      "<dt>pNN</dt><dd>the NN-th percentile: NN % of the requests took at most this "
      "long.</dd>\n"
      "<dt>Deadline</dt><dd>TTFT budget + decode budget × generated tokens; a request meets "
      "it when its E2E latency is within.</dd>\n"
      "<dt>Goodput</dt><dd>requests per second that met every bound given with "
      "<code>--goodput</code> (only when given).</dd>\n"
      "<dt>Throughputs</dt><dd>over the benchmark duration, from the first arrival to the "
      "last response, as vLLM's benchmark measures them; the peak output token throughput is "
      "the most tokens reaching the devices in one second.</dd>\n"
      "<dt>Peak concurrent requests</dt><dd>the most requests in flight at once, between "
      "issue and response.</dd>\n";
  out += terms(server.server_terms);
  out +=
      "<dt>Overloaded</dt><dd>the requests ask more than the server can give: on the edge "
      "server, their execution times summed over the time the arrivals span exceed what "
      "its cores can do; on either server, the last response comes more than " +
      fixed(kDrainShareOfSpan * 100, 0) +
      " % of that span, and more than the mean deadline budget, after the last "
      "arrival (the queue still draining).</dd>\n</dl>\n";
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
    const auto utilization = figure_value(recorded->summary, "utilization");
    const std::string busy =
        "over the whole run the " + server.busy_words + " only " +
        (utilization ? fixed(*utilization * 100, 0) + " %" : std::string("part")) + " of the time";
    const std::string bursts =
        "While a burst lasts, requests arrive faster than the server finishes them: the "
        "queue grows (the queue plot), every request behind it waits, and the deadlines of "
        "the slices that follow are missed (the miss-rate plot), although " +
        busy + ". ";
    // What the gap is made of, as measured: the bursts are blamed only when
    // the timing is the larger factor.
    const std::vector<AttributedFigure> split = synthetic && retimed
                                                    ? attribute(*recorded, *retimed, *synthetic)
                                                    : std::vector<AttributedFigure>{};
    const AttributedFigure* headline = headline_figure(split);
    if (headline == nullptr || headline->larger == "timing") {
      out += bursts;
    } else if (headline->larger == "size mix") {
      out += std::string(
                 "Here the bursts are not the larger part of the gap: the size mix is, "
                 "the recorded requests' sizes against the synthetic ones") +
             (pull_apart(*headline) ? ", and the timing pulls the other way. " : ". ");
    } else {
      out += "Neither the bursts nor the sizes move the gap by more than 10 % here, and " + busy +
             ". ";
    }
    if (headline != nullptr) {
      out += html_escape(attribution_sentence(split)) +
             " (the table <i>What the gap is made of</i> above).";
    } else if (synthetic && synthetic->arrivals.find("recorded") == std::string::npos) {
      out +=
          "Arrivals drawn at the same mean rate carry the same work; how much of the gap their "
          "timing makes, and how much their sizes, the compare mode's retimed column tells.";
    }
    out += "</p>\n";
  }
  out +=
      "<h3>The files</h3>\n<p><code>summary.json</code> and <code>summary.csv</code> hold "
      "every figure; <code>timeseries.csv</code> the slices the plots draw (arrivals, "
      "completions and deadline misses by response, queue length, busy " +
      server.unit +
      "s, utilization, energy, the 99th percentiles of the waits starting in the slice and of "
      "the TTFTs of the requests arriving in it" +
      server.series_words +
      "); <code>cdf.csv</code> the distributions of wait, TTFT and E2E latency; a replicated "
      "mode's <code>timeseries_band.csv</code> and <code>cdf_band.csv</code> its seeds' "
      "spread; <code>plots/*.gp</code> the gnuplot scripts, which <code>gnuplot "
      "plots/*.gp</code> in the run folder renders again after an edit.</p>\n";
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
div.banner { margin: 12px 0; padding: 12px 16px; border-radius: 4px; border: 1px solid #c0392b;
             background: #fdedec; color: #641e16; }
div.verdict { margin: 10px 0; padding: 2px 14px; border-left: 5px solid #c8cdd3; }
div.verdict.met { border-left-color: #1e8449; }
div.verdict.missed { border-left-color: #c0392b; }
div.verdict h3 { margin: 8px 0 4px; }
div.verdict ul { margin: 4px 0 8px; padding-left: 20px; }
div.verdict li.miss { color: #a93226; }
p.warn { border-left: 5px solid #d68910; padding: 4px 12px; background: #fdf2e9; }
table.knobs th[scope=row] { width: 60%; }
table.knobs td { text-align: left; }
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
                        const std::vector<ReportFigure>& figures, const std::string& plots_note,
                        const std::vector<PageSection>& sections, const ModeResult* retimed) {
  const std::string trace = json_text(settings, "trace", "path", "?");
  const std::string mode = json_text(settings, "run", "mode", results.size() == 2 ? "compare" : "");
  const std::string digest = json_text(settings, "trace", "sha256");
  const ServerDescription server_description =
      results.empty() ? ServerDescription{} : results.front()->server;
  const std::string server =
      server_description.headline.empty() ? "?" : server_description.headline;
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
          html_escape(server) + ", seed " + html_escape(json_text(settings, "run", "seed", "?")) +
          ".</p>\n<p class=\"meta\">" +
          html_escape(json_text(settings, "meta", "program", "infersim") + " " +
                      json_text(settings, "meta", "version")) +
          (settings.contains("meta")
               ? ", written " + html_escape(json_text(settings, "meta", "written_at"))
               : std::string()) +
          ". Every setting is in <code>settings.json</code>; <code>infersim run --settings "
          "settings.json</code> runs it again.</p>\n"
          "<nav><a href=\"#verdict\">Verdict</a><a href=\"#figures\">Figures</a>";
  for (const PageSection& section : sections)
    page += "<a href=\"#" + html_escape(section.id) + "\">" + html_escape(section.heading) + "</a>";
  page +=
      "<a href=\"#time\">Over time</a><a href=\"#distributions\">Distributions</a>"
      "<a href=\"#guide\">Reading guide</a><a href=\"#all\">Every figure</a></nav>\n"
      "</header>\n";

  // The verdict first: an overloaded server above all, then each mode's
  // deadlines, then what produced them.
  page += "<section id=\"verdict\">\n<h2>Verdict</h2>\n";
  // Each derived preset used with nothing measured says how far it may be.
  if (const nlohmann::ordered_json* presets = json_at(settings, "meta", "presets_expected_error");
      presets != nullptr && presets->is_object()) {
    for (const auto& [name, e] : presets->items()) {
      if (!e.is_object() || !e.contains("pct") || !e["pct"].is_object()) continue;
      std::string classes;
      std::size_t count = 0;
      for (const ClassDescription& c : server_description.classes) {
        if (c.preset != name) continue;
        classes += (classes.empty() ? "" : ", ") + c.name;
        ++count;
      }
      const nlohmann::ordered_json& pct = e["pct"];
      page += "<p class=\"warn\" data-preset=\"" + html_escape(name) + "\">" +
              html_escape(preset_error_line(
                  name, count == 0 ? "" : (count == 1 ? "class " : "classes ") + classes,
                  pct.value("ttft", 0.0), pct.value("tpot", 0.0), pct.value("latency", 0.0),
                  e.value("from", std::string()))) +
              "</p>\n";
    }
  }
  for (const ModeResult* r : results) {
    const LoadVerdict load = assess_load(*r);
    if (!load.overloaded) continue;
    std::string text = overload_text(*r, load);
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    page += "<div class=\"banner overload\" role=\"alert\" data-mode=\"" + html_escape(r->mode) +
            "\"><b>Overloaded: " + html_escape(mode_title(*r)) + ".</b> " + html_escape(text) +
            ".</div>\n";
  }
  for (const ModeResult* r : results) {
    const std::string rejected = rejection_text(*r);
    if (rejected.empty()) continue;
    page += "<div class=\"banner overload\" role=\"alert\" data-mode=\"" + html_escape(r->mode) +
            "\"><b>Most requests refused.</b> " + html_escape(rejected) + ".</div>\n";
  }
  for (const ModeResult* r : results)
    page += verdict_html(*r, settings);
  const bool synthetic = std::any_of(results.begin(), results.end(),
                                     [](const ModeResult* r) { return r->mode == "synthetic"; });
  page += "<h3>What produced it</h3>\n" + knobs_html(settings, server_description, synthetic) +
          class_knobs_html(server_description) + "</section>\n";

  page += "<section id=\"figures\">\n<h2>Figures</h2>\n";
  if (!results.empty()) page += figures_html_table(results) + fleet_table(results);
  if (retimed != nullptr && results.size() == 2) {
    page += "<h3>What the gap is made of</h3>\n<pre class=\"attribution\">" +
            html_escape(attribution_table(attribute(*results[0], *retimed, *results[1]),
                                          *results[0], *retimed, *results[1])) +
            "</pre>\n<p>" +
            html_escape(attribution_sentence(attribute(*results[0], *retimed, *results[1]))) +
            "</p>\n";
  }
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
  std::size_t numbered = figures.size();
  for (const PageSection& section : sections) {
    page += "<section id=\"" + html_escape(section.id) + "\">\n<h2>" +
            html_escape(section.heading) + "</h2>\n" + section.html;
    for (const ReportFigure& f : section.figures)
      page += figure_html(f, numbered++);
    page += "</section>\n";
  }
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
  if (!results.empty()) {
    page += "<section id=\"guide\">\n<h2>Reading guide</h2>\n" + reading_guide(results, retimed) +
            "</section>\n";
  }
  page +=
      "<section id=\"all\">\n<h2>Every figure</h2>\n<details>\n<summary>The keys of "
      "<code>summary.json</code>, as written</summary>\n" +
      all_figures_table(results) + "</details>\n</section>\n</body>\n</html>\n";
  return page;
}

}  // namespace infersim
