#include "report/figure_text.hpp"
#include <cstdio>

#include <algorithm>

#include <charconv>
#include <cmath>
#include <cstdint>

#include "core/number_format.hpp"

namespace infersim {
namespace {

// "ttft_p99.9_s" -> ("ttft", "99.9"); none for a key of another shape.
std::optional<std::pair<std::string, std::string>> percentile_parts(const std::string& key) {
  const auto at = key.rfind("_p");
  if (at == std::string::npos || !key.ends_with("_s") || at + 2 >= key.size() - 2) {
    return std::nullopt;
  }
  const std::string number = key.substr(at + 2, key.size() - at - 4);
  double p = 0;
  const auto r = std::from_chars(number.data(), number.data() + number.size(), p);
  if (r.ec != std::errc() || r.ptr != number.data() + number.size()) return std::nullopt;
  return std::pair{key.substr(0, at), number};
}

// The name of a distribution the summary holds the mean and percentiles of.
std::optional<std::string> distribution_name(const std::string& metric,
                                             const ServerDescription& server) {
  if (metric == "ttft") return "Time to first token (TTFT)";
  if (metric == "tpot") return "Time per output token (TPOT)";
  if (metric == "itl") return "Inter-token latency (ITL)";
  if (metric == "e2el" || metric == "makespan") return "E2E latency";
  if (metric == "wait") return server.wait_name;
  return std::nullopt;
}

std::string with_half(const std::string& value, const std::optional<double>& half, int decimals,
                      double scale, const std::string& unit) {
  std::string text = value;
  if (half) text += " ± " + fixed(*half * scale, decimals);
  return text + unit;
}

}  // namespace

std::string mode_title(const ModeResult& r) {
  if (r.max_concurrency > 0) {
    return "Closed loop, " + std::to_string(r.max_concurrency) + " in flight";
  }
  if (r.client) {
    return r.request_rate ? "Paced at " + shortest(*r.request_rate) + " req/s, no cap"
                          : "All at once, no cap";
  }
  if (r.mode == "recorded") return "Recorded trace";
  const std::string arrivals = r.arrivals.empty() ? std::string("poisson") : r.arrivals;
  if (r.mode == "retimed") return "Recorded requests at " + arrivals + " instants";
  return "Synthetic " + arrivals;
}

std::string column_title(const ModeResult& r) {
  std::string title = mode_title(r);
  if (!r.replications.empty()) {
    title += ", mean ± 95 % CI of " + std::to_string(r.replications.size()) + " seeds";
  }
  return title;
}

std::string series_label(const ModeResult& r) {
  std::string label = mode_title(r);
  label[0] = static_cast<char>(label[0] - 'A' + 'a');
  return label;
}

std::string units_text(const ModeResult& r) {
  return std::to_string(r.server.units) + " " + r.server.unit + (r.server.units == 1 ? "" : "s");
}

std::string busy_units_text(const ModeResult& r, const Summary& summary) {
  if (r.time_series.fleet || !r.classes.empty()) {
    // A fleet's slots are not its replicas: each mode provisions its own.
    const auto peak = figure_value(summary, "peak_replicas");
    if (!peak) return "the replicas provisioned were";
    const auto most = static_cast<std::uint64_t>(std::llround(*peak));
    return "the replicas provisioned (at most " + std::to_string(most) + " at once) were";
  }
  return "the " + units_text(r) + (r.server.units == 1 ? " was" : " were");
}

std::string figure_label(const std::string& key, const ServerDescription& server) {
  for (const auto& [own, label] : server.labels) {
    if (key == own) return label;
  }
  struct Name {
    const char* key;
    const char* label;
  };
  static const Name kNames[] = {
      {"requests", "Requests generated"},
      {"dropped", "Dropped (arrived after the run's end)"},
      {"rejected", "Rejected (longer than max_model_len)"},
      {"deadline_met", "Requests that met their deadline"},
      {"deadline_missed", "Requests that missed their deadline"},
      {"success_rate", "Requests that met their deadline"},
      {"avg_exec_s", "Execution time of a request, mean"},
      {"avg_makespan_ok_s", "E2E latency, mean over deadline-met requests"},
      {"avg_budget_s", "Deadline budget, mean"},
      {"traffic_mb", "Total traffic"},
      {"energy_wh", "Energy of the run"},
      {"run_length_s", "Run length"},
      {"end_s", "End of the run (run length, or the last response when later)"},
      {"benchmark_duration_s", "Benchmark duration (first arrival to last response)"},
      {"total_input_tokens", "Total input tokens"},
      {"total_output_tokens", "Total generated tokens"},
      {"request_throughput_rps", "Request throughput"},
      {"output_throughput_tps", "Output token throughput"},
      {"total_token_throughput_tps", "Total token throughput"},
      {"peak_output_throughput_tps", "Peak output token throughput (most in one second)"},
      {"max_concurrent_requests", "Peak concurrent requests"},
      {"max_concurrency", "Closed loop: most requests in flight (clients)"},
      {"mean_in_flight", "Requests in flight, mean (Little's law)"},
      {"output_throughput_per_user_tps", "Output tokens a second per user (1 / mean TPOT)"},
      {"output_throughput_per_gpu_tps", "Output tokens a second per GPU"},
      {"good_requests", "Requests meeting every goodput bound"},
      {"good_request_fraction", "Share meeting every goodput bound"},
      {"goodput_rps", "Goodput"},
      {"preemptions", "Preemptions"},
      {"evicted_blocks", "KV blocks evicted"},
      {"prefix_hit_rate", "Prefix cache hit rate"},
      {"steps", "Steps"},
      {"avg_batch_requests", "Batch size, mean (requests a step)"},
      {"kv_peak_utilization", "KV cache use, peak"},
      {"replica_hours", "Replica-hours provisioned"},
      {"gpu_hours", "GPU-hours provisioned"},
      {"cost_usd", "Cost of the run ($)"},
      {"usd_per_million_tokens", "Cost a million tokens served ($)"},
      {"peak_replicas", "Replicas provisioned, peak"},
      {"scale_ups", "Replicas started by the autoscaler"},
      {"scale_downs", "Replicas the autoscaler let go"},
      {"kv_transfers", "KV transfers, prefill to decode"},
      {"kv_transfer_gb", "KV transferred (GB)"},
      {"kv_transfer_p50_s", "KV transfer, first token to decode queue, p50"},
      {"kv_transfer_p99_s", "KV transfer, first token to decode queue, p99"},
      {"decode_wait_p99_s", "Wait for a decode replica, p99"},
  };
  for (const Name& n : kNames) {
    if (key == n.key) return n.label;
  }
  if (key == "avg_wait_s" || key == "wait_mean_s") return server.wait_name + ", mean";
  if (key.ends_with("_mean_s")) {
    const std::string metric = key.substr(0, key.size() - 7);
    if (const auto name = distribution_name(metric, server)) {
      return *name + (metric == "e2el" ? ", mean over all requests" : ", mean");
    }
  }
  if (const auto parts = percentile_parts(key)) {
    if (const auto name = distribution_name(parts->first, server))
      return *name + ", p" + parts->second;
  }
  return key;
}

FigureUnit figure_unit(const std::string& key) {
  for (const char* count :
       {"requests", "dropped", "rejected", "deadline_met", "deadline_missed",
        "max_concurrent_requests", "max_concurrency", "good_requests", "preemptions",
        "evicted_blocks", "steps", "peak_replicas", "scale_ups", "scale_downs", "kv_transfers"}) {
    if (key == count) return FigureUnit::kCount;
  }
  for (const char* share : {"success_rate", "utilization", "prefix_hit_rate", "kv_peak_utilization",
                            "good_request_fraction"}) {
    if (key == share) return FigureUnit::kShare;
  }
  if (key == "compute_s" || key == "waiting_total_s") return FigureUnit::kTotalSeconds;
  if (key == "total_input_tokens" || key == "total_output_tokens") return FigureUnit::kTokens;
  if (key == "energy_wh") return FigureUnit::kWh;
  if (key == "traffic_mb") return FigureUnit::kMb;
  if (key.ends_with("_rps")) return FigureUnit::kReqPerS;
  if (key.ends_with("_tps")) return FigureUnit::kTokPerS;
  if (key.ends_with("_s")) return FigureUnit::kSeconds;
  return FigureUnit::kDecimal;
}

std::string duration_text(double s, std::optional<double> half) {
  const double m = std::fabs(s);
  if (m == 0 && (!half || *half == 0)) return "0 s";
  if (m < 1) {
    const double ms = m * 1000;
    const int decimals = ms >= 100 ? 1 : ms >= 10 ? 2 : 3;
    return with_half(fixed(s * 1000, decimals), half, decimals, 1000, " ms");
  }
  if (m < 1000) {
    const int decimals = m >= 100 ? 1 : 3;
    return with_half(fixed(s, decimals), half, decimals, 1, " s");
  }
  if (m < 7200) return with_half(fixed(s / 60, 1), half, 1, 1.0 / 60, " min");
  return with_half(fixed(s / 3600, 2), half, 2, 1.0 / 3600, " h");
}

std::string millis_text(double s, std::optional<double> half) {
  std::string text = with_half(fixed(s * 1000, 2), half, 2, 1000, "");
  if (std::fabs(s) >= 60) text += " (" + duration_text(s) + ")";
  return text;
}

std::string figure_text(double v, FigureUnit unit, std::optional<double> half, bool mean_of_runs) {
  if (unit == FigureUnit::kSeconds) return duration_text(v, half);
  // Every other unit: fixed decimals of the value times `scale`, then a suffix.
  struct Fixed {
    FigureUnit unit;
    int decimals;
    double scale;
    const char* suffix;
  };
  static constexpr Fixed kFixed[] = {
      {FigureUnit::kCount, 0, 1, ""},          {FigureUnit::kShare, 2, 100, " %"},
      {FigureUnit::kTotalSeconds, 2, 1, " s"}, {FigureUnit::kReqPerS, 3, 1, " req/s"},
      {FigureUnit::kTokPerS, 1, 1, " tok/s"},  {FigureUnit::kTokens, 0, 1, ""},
      {FigureUnit::kWh, 2, 1, " Wh"},          {FigureUnit::kMb, 2, 1, " MB"},
      {FigureUnit::kDecimal, 2, 1, ""},
  };
  for (const Fixed& f : kFixed) {
    if (f.unit != unit) continue;
    const int decimals = unit == FigureUnit::kCount && mean_of_runs ? 1 : f.decimals;
    return with_half(fixed(v * f.scale, decimals), half, decimals, f.scale, f.suffix);
  }
  return fixed(v, 3);
}

bool holds(const Summary& summary, const std::string& key) {
  const auto& f = summary.figures();
  return std::any_of(f.begin(), f.end(), [&](const Figure& x) { return x.key == key; });
}

std::vector<std::pair<double, std::string>> percentile_keys(const Summary& summary,
                                                            const std::string& metric) {
  std::vector<std::pair<double, std::string>> out;
  const std::string prefix = metric + "_p";
  for (const Figure& f : summary.figures()) {
    if (!f.key.starts_with(prefix) || !f.key.ends_with("_s")) continue;
    const std::string number = f.key.substr(prefix.size(), f.key.size() - prefix.size() - 2);
    double p = 0;
    const auto r = std::from_chars(number.data(), number.data() + number.size(), p);
    if (r.ec == std::errc() && r.ptr == number.data() + number.size()) out.emplace_back(p, f.key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<double> figure_value(const Summary& summary, const std::string& key) {
  for (const Figure& f : summary.figures()) {
    if (f.key == key) return f.value;
  }
  return std::nullopt;
}

std::string figure_cell(const ModeResult& r, const FigureRow& row) {
  const auto v = figure_value(r.summary, row.key);
  if (!v) return "n/a";
  const bool replicated = !r.replications.empty();
  const std::optional<double> half =
      replicated ? figure_value(r.ci95, row.key + "_ci95") : std::nullopt;
  std::string text = figure_text(*v, row.unit, half, replicated);
  if (row.key == "success_rate") {
    if (const auto met = figure_value(r.summary, "deadline_met")) {
      text += " (" + fixed(*met, replicated ? 1 : 0) + ")";
    }
  }
  return text;
}

std::string ratio_text(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b == 0) return "n/a";
  const double ratio = *a / *b;
  return fixed(ratio, std::fabs(ratio) >= 100 ? 0 : 3);
}

std::vector<FigureRow> comparison_rows(const ModeResult& first) {
  const ServerDescription& server = first.server;
  // The seed's table, in its order, then the serving figures; the server's
  // own where it says.
  std::vector<std::string> keys = {"requests"};
  const auto add = [&](const std::vector<std::string>& more) {
    keys.insert(keys.end(), more.begin(), more.end());
  };
  add(server.table_after_requests);
  keys.emplace_back("compute_s");
  add(server.table_after_compute);
  for (const char* key :
       {"utilization", "waiting_total_s", "avg_wait_s", "success_rate", "avg_makespan_ok_s",
        "traffic_mb", "energy_wh", "ttft_mean_s", "ttft_p99_s", "tpot_mean_s"}) {
    keys.emplace_back(key);
  }
  add(server.table_after_tpot);
  for (const char* key : {"e2el_mean_s", "request_throughput_rps", "max_concurrent_requests"})
    keys.emplace_back(key);
  add(server.table_last);
  std::vector<FigureRow> rows;
  const auto& held = first.summary.figures();
  for (const std::string& key : keys) {
    const bool there =
        std::any_of(held.begin(), held.end(), [&](const Figure& f) { return f.key == key; });
    if (there) rows.push_back({figure_label(key, server), key, figure_unit(key)});
  }
  return rows;
}

std::string preset_error_line(const std::string& preset, const std::string& used_by,
                              double ttft_pct, double tpot_pct, double latency_pct,
                              const std::string& from) {
  char figures[160];
  std::snprintf(figures, sizeof(figures),
                "about %.0f %% (TTFT), %.0f %% (TPOT) and %.0f %% (latency)", ttft_pct, tpot_pct,
                latency_pct);
  return "Preset " + preset + (used_by.empty() ? "" : " (" + used_by + ")") +
         ": derived from a datasheet and a model's architecture, not measured; expect its "
         "figures off by " +
         figures + (from.empty() ? "" : ": " + from + ", predicted with nothing fitted on it") +
         " (settings/presets/README.md).";
}

}  // namespace infersim
