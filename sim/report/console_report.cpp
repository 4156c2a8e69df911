#include "report/console_report.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "report/number_format.hpp"

namespace infersim {
namespace {

// Seconds with at most three decimals, trailing zeros trimmed.
std::string brief_seconds(SimTime t) {
  std::string s = fixed(t.seconds(), 3);
  while (s.back() == '0')
    s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string figure(const Summary& s, const std::string& key, double scale, int decimals) {
  const auto v = s.get(key);
  return v ? fixed(*v * scale, decimals) : std::string("n/a");
}

}  // namespace

std::string trace_line(const Trace& trace) {
  const std::string unit = trace.timestamp_unit == "datetime"
                               ? "calendar timestamps"
                               : "timestamps in " + trace.timestamp_unit;
  std::string line = "Trace " + trace.path + ": " + trace.format + ", " + unit + ", " +
                     std::to_string(trace.records.size()) + " requests";
  if (trace.filtered_out > 0) {
    line += " (" + std::to_string(trace.filtered_out) + " rows left out by --filter)";
  }
  return line + ".";
}

std::string replay_line(const GeneratedRequests& r) {
  const std::size_t n = r.tasks.size();
  std::string line = "Trace replay: " + std::to_string(n) + " requests scheduled";
  if (n > 0) {
    line += " between " + brief_seconds(r.tasks.front().arrival) + " and " +
            brief_seconds(r.tasks.back().arrival) + " s";
  }
  line += ", " + std::to_string(r.dropped) +
          " dropped because they arrive after the end of the run at " +
          brief_seconds(r.run_length) + " s";
  if (r.outside_window > 0) {
    line += ", " + std::to_string(r.outside_window) + " outside the replay window";
  }
  if (n > 1) {
    const Duration replayed = r.tasks.back().arrival - r.tasks.front().arrival;
    if (replayed > Duration::zero()) {
      line += "; offered " + fixed(static_cast<double>(n) / replayed.seconds(), 3) +
              " requests/s over the " + brief_seconds(SimTime::zero() + replayed) + " s replayed";
    }
  }
  return line + ".";
}

std::string result_line(const ModeResult& r) {
  const Summary& s = r.summary;
  const auto n = static_cast<long long>(*s.get("requests"));
  const auto met = static_cast<long long>(*s.get("deadline_met"));
  char head[160];
  std::snprintf(head, sizeof(head), "%-10s tasks=%6lld ok=%6lld requests_ok=%5lld/%lld  ",
                r.mode.c_str(), n, met, met, n);
  return std::string(head) + "compute=" + figure(s, "compute_s", 1, 4) +
         " s waiting=" + figure(s, "waiting_total_s", 1, 4) +
         " s avg_wait=" + figure(s, "avg_wait_s", 1, 4) +
         " s avg_makespan=" + figure(s, "avg_makespan_ok_s", 1, 4) +
         " s edge_cpu=" + figure(s, "utilization", 100, 4) +
         " % traffic=" + figure(s, "traffic_mb", 1, 4) +
         " MB energy=" + figure(s, "energy_wh", 1, 4) + " Wh";
}

std::string serving_line(const ModeResult& r) {
  const Summary& s = r.summary;
  auto held = [&](const std::string& key) {
    const auto& f = s.figures();
    return std::any_of(f.begin(), f.end(), [&](const Figure& x) { return x.key == key; });
  };
  char head[16];
  std::snprintf(head, sizeof(head), "%-10s", r.mode.c_str());
  std::string line = head;
  for (const char* metric : {"ttft", "tpot", "e2el"}) {
    line += std::string(" ") + metric;
    for (const char* p : {"50", "99"}) {
      const std::string key = std::string(metric) + "_p" + p + "_s";
      if (held(key)) line += std::string(" p") + p + "=" + figure(s, key, 1000, 1) + " ms";
    }
    line += " ";
  }
  if (held("max_concurrent_requests")) {
    line += " max_concurrent=" +
            figure(s, "max_concurrent_requests", 1, r.replications.empty() ? 0 : 1);
  }
  if (held("goodput_rps")) {
    line += " goodput=" + figure(s, "goodput_rps", 1, 4) + " req/s (" +
            figure(s, "good_request_fraction", 100, 2) + " %)";
  }
  return line;
}

}  // namespace infersim

namespace infersim {
namespace {

struct Row {
  const char* label;
  const char* key;
  double scale;
  int decimals;
  const char* unit;
};

std::string cell(const ModeResult& r, const Row& row) {
  const auto v = r.summary.get(row.key);
  if (!v) return "n/a";
  std::string text = fixed(*v * row.scale, row.decimals);
  if (!r.replications.empty()) {
    const auto half = r.ci95.get(std::string(row.key) + "_ci95");
    if (half) text += " ± " + fixed(*half * row.scale, row.decimals);
  }
  return text + row.unit;
}

// Width in characters: UTF-8 continuation bytes (of ±) do not count.
std::size_t display_width(const std::string& text) {
  std::size_t shown = 0;
  for (unsigned char c : text)
    shown += (c & 0xC0) != 0x80;
  return shown;
}

std::string pad(std::string text, std::size_t width) {
  const std::size_t shown = display_width(text);
  if (shown < width) text.append(width - shown, ' ');
  return text;
}

}  // namespace

std::string synthetic_line(const ModeResult& r, const TraceRates& rates,
                           const std::string& arrivals, const std::string& sizes) {
  std::string line = "Synthetic " + arrivals + ": " + std::to_string(r.tasks.size()) +
                     " requests drawn at the trace's mean rate of " + fixed(rates.rate_per_s, 4) +
                     "/s until " + brief_seconds(r.run_length) + " s, ";
  if (sizes == "mean") {
    line += "mean sizes of " + fixed(rates.mean_context_tokens, 3) + " context and " +
            fixed(rates.mean_generated_tokens, 3) + " generated tokens";
  } else {
    line += "sizes drawn from the recorded requests";
  }
  line += ", seed " + std::to_string(r.seed);
  if (!r.replications.empty()) {
    line += " (and " + std::to_string(r.replications.size() - 1) + " more seeds, up to " +
            std::to_string(r.seed + r.replications.size() - 1) + ")";
  }
  return line + ".";
}

std::string compare_table(const ModeResult& recorded, const ModeResult& synthetic) {
  static const Row kRows[] = {
      {"Requests generated", "requests", 1, 0, ""},
      {"Total compute executed", "compute_s", 1, 2, " s"},
      {"Average task execution time", "avg_exec_s", 1, 3, " s"},
      {"Average edge CPU utilization", "utilization", 100, 2, " %"},
      {"Total time spent waiting", "waiting_total_s", 1, 2, " s"},
      {"Average task waiting time", "avg_wait_s", 1, 3, " s"},
      {"Requests that completed successfully", "success_rate", 100, 2, " %"},
      {"Average request makespan", "avg_makespan_ok_s", 1, 3, " s"},
      {"Total traffic", "traffic_mb", 1, 2, " MB"},
      {"Energy of the run", "energy_wh", 1, 2, " Wh"},
      // The serving figures, after the seed's table.
      {"Mean time to first token", "ttft_mean_s", 1, 3, " s"},
      {"P99 time to first token", "ttft_p99_s", 1, 3, " s"},
      {"Mean time per output token", "tpot_mean_s", 1000, 2, " ms"},
      {"Mean end-to-end latency", "e2el_mean_s", 1, 3, " s"},
      {"Request throughput", "request_throughput_rps", 1, 3, " req/s"},
      {"Peak concurrent requests", "max_concurrent_requests", 1, 0, ""},
  };
  const std::string synthetic_title =
      synthetic.replications.empty()
          ? "Synthetic poisson"
          : "Synthetic, mean ± 95 % CI of " + std::to_string(synthetic.replications.size());
  std::vector<std::array<std::string, 4>> lines;
  lines.push_back({"Metric", "Recorded trace", synthetic_title, "Recorded/synthetic"});
  for (const Row& row : kRows) {
    const auto& held = recorded.summary.figures();
    if (std::none_of(held.begin(), held.end(), [&](const Figure& f) { return f.key == row.key; })) {
      continue;  // a summary without the serving figures
    }
    std::string left = cell(recorded, row);
    std::string right = cell(synthetic, row);
    if (std::string(row.key) == "success_rate") {
      auto met = [](const ModeResult& r) {
        const auto v = r.summary.get("deadline_met");
        return v ? " (" + fixed(*v, r.replications.empty() ? 0 : 1) + ")" : std::string();
      };
      left += met(recorded);
      right += met(synthetic);
    }
    const auto a = recorded.summary.get(row.key);
    const auto b = synthetic.summary.get(row.key);
    std::string ratio = "n/a";
    if (a && b && *b != 0) ratio = fixed(*a / *b, *a / *b >= 100 ? 0 : 3);
    lines.push_back({row.label, left, right, ratio});
  }
  std::array<std::size_t, 3> width{};
  for (const auto& line : lines) {
    for (std::size_t i = 0; i < 3; ++i)
      width[i] = std::max(width[i], display_width(line[i]));
  }
  std::string out;
  for (const auto& line : lines) {
    out += pad(line[0], width[0] + 2) + pad(line[1], width[1] + 2) + pad(line[2], width[2] + 2) +
           line[3] + "\n";
  }
  return out;
}

}  // namespace infersim
