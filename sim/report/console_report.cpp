#include "report/console_report.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "core/number_format.hpp"
#include "report/figure_text.hpp"
#include "report/load_verdict.hpp"

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

namespace {

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

// `title` centred in 50 characters of `fill`, as Python's '{:{c}^50}' (the
// extra character of an odd remainder on the right).
std::string rule(const std::string& title, char fill) {
  const std::size_t width = 50;
  const std::size_t shown = display_width(title);
  if (shown >= width) return title;
  const std::size_t left = (width - shown) / 2;
  return std::string(left, fill) + title + std::string(width - shown - left, fill);
}

// How a block cell shows a figure.
enum class Cell { kCount, kReal, kMillis };

std::string block_cell(const ModeResult& r, const std::string& key, Cell how) {
  const auto v = figure_value(r.summary, key);
  if (!v) return "n/a";
  const bool replicated = !r.replications.empty();
  const std::optional<double> half =
      replicated ? figure_value(r.ci95, key + "_ci95") : std::nullopt;
  switch (how) {
    case Cell::kCount:
      return figure_text(*v, FigureUnit::kCount, half, replicated);
    case Cell::kReal:
      return figure_text(*v, FigureUnit::kDecimal, half);
    case Cell::kMillis:
      return millis_text(*v, half);
  }
  return "";
}

}  // namespace

std::string columns(const std::vector<std::vector<std::string>>& lines, std::size_t first_width) {
  std::vector<std::size_t> width;
  for (const auto& line : lines) {
    if (line.size() < 2) continue;
    if (width.size() < line.size()) width.resize(line.size(), 0);
    for (std::size_t i = 0; i < line.size(); ++i)
      width[i] = std::max(width[i], display_width(line[i]));
  }
  if (!width.empty()) width[0] = std::max(width[0], first_width);
  std::string out;
  for (const auto& line : lines) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i)
      text += i + 1 == line.size() ? line[i] : pad(line[i], width[i] + 2);
    while (!text.empty() && text.back() == ' ')
      text.pop_back();
    out += text + "\n";
  }
  return out;
}

std::string synthetic_line(const ModeResult& r, const TraceRates& rates,
                           const std::string& arrivals, const std::string& sizes) {
  std::string line = "Synthetic " + arrivals + ": " + std::to_string(r.tasks.size()) +
                     " requests drawn at the trace's mean rate of " + fixed(rates.rate_per_s, 4) +
                     "/s until " + brief_seconds(r.run_length) + " s, ";
  if (sizes == "mean") {
    line += "mean sizes of " + fixed(rates.mean_context_tokens, 3) + " context and " +
            fixed(rates.mean_generated_tokens, 3) + " generated tokens";
  } else if (sizes == "recorded") {
    line = (r.mode == "retimed" ? "Retimed " : "Synthetic ") + arrivals + ": the " +
           std::to_string(r.tasks.size()) +
           " recorded requests themselves, in their order, at instants drawn at the trace's mean "
           "rate of " +
           fixed(rates.rate_per_s, 4) + "/s over its span";
  } else {
    line += "sizes drawn from the recorded requests";
  }
  line += ", seed " + std::to_string(r.seed);
  if (!r.replications.empty()) {
    // The mean as the tables print it, so that the two agree.
    line += "; seeds " + std::to_string(r.seed) + " to " +
            std::to_string(r.seed + r.replications.size() - 1) + " drew " +
            figure_cell(r, {"", "requests", FigureUnit::kCount}) + " requests on average";
  }
  return line + ".";
}

std::string benchmark_block(const std::vector<const ModeResult*>& results) {
  if (results.empty()) return "";
  const ModeResult& first = *results.front();
  using Line = std::vector<std::string>;
  std::vector<Line> lines;
  const bool titled = results.size() > 1 || !first.replications.empty();
  if (titled) {
    Line title = {""};
    for (const ModeResult* r : results)
      title.push_back(column_title(*r));
    lines.push_back(title);
  }
  auto row = [&](const std::string& label, const std::string& key, Cell how) {
    if (!holds(first.summary, key)) return;
    Line line = {label};
    for (const ModeResult* r : results)
      line.push_back(block_cell(*r, key, how));
    lines.push_back(line);
  };
  auto section = [&](const std::string& title) { lines.push_back({rule(title, '-')}); };
  auto distribution = [&](const std::string& metric, const std::string& name,
                          const std::string& title) {
    if (!holds(first.summary, metric + "_mean_s")) return;
    section(title);
    row("Mean " + name + " (ms):", metric + "_mean_s", Cell::kMillis);
    const std::string median = metric + "_p50_s";
    row("Median " + name + " (ms):", median, Cell::kMillis);
    for (const auto& [p, key] : percentile_keys(first.summary, metric)) {
      if (key != median) row("P" + shortest(p) + " " + name + " (ms):", key, Cell::kMillis);
    }
  };

  // Served requests: those not rejected (a batching server's refusals; the
  // edge server refuses none).
  {
    Line served = {"Successful requests:"};
    Line failed = {"Failed requests:"};
    for (const ModeResult* r : results) {
      const bool replicated = !r->replications.empty();
      if (!holds(r->summary, "rejected")) {
        served.push_back(block_cell(*r, "requests", Cell::kCount));
        failed.push_back("0");
        continue;
      }
      const double requests = figure_value(r->summary, "requests").value_or(0);
      const double rejected = figure_value(r->summary, "rejected").value_or(0);
      served.push_back(
          figure_text(requests - rejected, FigureUnit::kCount, std::nullopt, replicated));
      failed.push_back(block_cell(*r, "rejected", Cell::kCount));
    }
    lines.push_back(served);
    lines.push_back(failed);
  }
  // vLLM's lines in vLLM's order, then a closed loop's (MODEL.md section 4b).
  struct BlockRow {
    const char* label;
    const char* key;
    Cell how;
  };
  static constexpr BlockRow kLoad[] = {
      {"Maximum request concurrency:", "max_concurrency", Cell::kCount},
      {"Benchmark duration (s):", "benchmark_duration_s", Cell::kReal},
      {"Total input tokens:", "total_input_tokens", Cell::kCount},
      {"Total generated tokens:", "total_output_tokens", Cell::kCount},
      {"Request throughput (req/s):", "request_throughput_rps", Cell::kReal},
      {"Request goodput (req/s):", "goodput_rps", Cell::kReal},
      {"Output token throughput (tok/s):", "output_throughput_tps", Cell::kReal},
      {"Peak output token throughput (tok/s):", "peak_output_throughput_tps", Cell::kReal},
      {"Peak concurrent requests:", "max_concurrent_requests", Cell::kCount},
      {"Total token throughput (tok/s):", "total_token_throughput_tps", Cell::kReal},
      {"Mean requests in flight:", "mean_in_flight", Cell::kReal},
      {"Output tok/s per user (1/TPOT):", "output_throughput_per_user_tps", Cell::kReal},
      {"Output tok/s per GPU:", "output_throughput_per_gpu_tps", Cell::kReal},
  };
  for (const BlockRow& r : kLoad)
    row(r.label, r.key, r.how);
  distribution("ttft", "TTFT", "Time to First Token");
  distribution("tpot", "TPOT", "Time per Output Token (excl. 1st token)");
  distribution("itl", "ITL", "Inter-token Latency");
  distribution("e2el", "E2EL", "End-to-end Latency");
  distribution("wait", "wait", first.server.wait_title);

  section("Deadlines");
  {
    Line met = {"Deadline met (E2E within budget):"};
    for (const ModeResult* r : results) {
      met.push_back(
          block_cell(*r, "deadline_met", Cell::kCount) + " (" +
          figure_text(figure_value(r->summary, "success_rate").value_or(0), FigureUnit::kShare) +
          ")");
    }
    lines.push_back(met);
  }
  row("Deadline missed:", "deadline_missed", Cell::kCount);
  row("Mean deadline budget (ms):", "avg_budget_s", Cell::kMillis);
  row("Mean E2EL of those that met it (ms):", "avg_makespan_ok_s", Cell::kMillis);
  row("Good requests (every goodput bound):", "good_requests", Cell::kCount);

  // Labels and the space after them take 41 characters, as vLLM's '{:<40} '.
  return rule(" Serving Benchmark Result ", '=') + "\n" + columns(lines, 39) +
         std::string(50, '=') + "\n";
}

std::string figures_table(const std::vector<const ModeResult*>& results) {
  if (results.empty()) return "";
  const bool compare = results.size() == 2;
  std::vector<std::vector<std::string>> lines;
  std::vector<std::string> head = {"Metric"};
  for (const ModeResult* r : results)
    head.push_back(r->mode == "recorded" ? mode_title(*r) : column_title(*r));
  if (compare) head.push_back("Recorded/synthetic");
  lines.push_back(head);
  for (const FigureRow& row : comparison_rows(*results.front())) {
    std::vector<std::string> line = {row.label};
    for (const ModeResult* r : results)
      line.push_back(figure_cell(*r, row));
    if (compare) {
      line.push_back(ratio_text(figure_value(results[0]->summary, row.key),
                                figure_value(results[1]->summary, row.key)));
    }
    lines.push_back(line);
  }
  const std::string bill = fleet_bill(results);
  return columns(lines) + (bill.empty() ? "" : "\n" + bill);
}

std::string fleet_bill(const std::vector<const ModeResult*>& results) {
  std::vector<std::vector<std::string>> lines;
  // Hours with four decimals and dollars with two: a class's cost is its
  // price x GPUs x replica-hours to the cent.
  const auto hours = [](double h) { return fixed(h, 4); };
  const auto dollars = [](double usd) { return "$" + fixed(usd, 2); };
  for (const ModeResult* r : results) {
    if (r->classes.empty()) continue;
    // A replicated mode's classes are its first seed's: so is its bill here.
    const bool replicated = !r->replications.empty();
    const Summary& s = replicated ? r->replications.front() : r->summary;
    const auto value = [&](const char* key) { return figure_value(s, key).value_or(0); };
    const auto count = [&](const char* key) { return figure_text(value(key), FigureUnit::kCount); };
    const auto per_million = figure_value(s, "usd_per_million_tokens");
    if (lines.empty()) {
      lines.push_back({"Bill", "replica-hours", "GPUs a replica", "GPU-hours", "$ a GPU-hour",
                       "cost", "$ a million tokens", "scale-ups", "scale-downs"});
    }
    lines.push_back({mode_title(*r) + (replicated ? ", seed " + std::to_string(r->seed) : ""),
                     hours(value("replica_hours")), "", hours(value("gpu_hours")), "",
                     dollars(value("cost_usd")), per_million ? "$" + fixed(*per_million, 4) : "n/a",
                     count("scale_ups"), count("scale_downs")});
    for (const ClassUsage& c : r->classes) {
      lines.push_back({"  " + c.name + (c.role.empty() ? "" : " (" + c.role + ")"),
                       hours(c.replica_hours), std::to_string(c.gpus), hours(c.gpu_hours),
                       shortest(c.price_per_gpu_hour), dollars(c.cost_usd), "", "", ""});
    }
  }
  if (lines.empty()) return "";
  return "The bill: a class's cost is its $ a GPU-hour x GPUs a replica x replica-hours; the "
         "mode's, the sum over its classes.\n" +
         columns(lines);
}

std::string compare_table(const ModeResult& recorded, const ModeResult& synthetic) {
  return figures_table({&recorded, &synthetic});
}

std::string load_warnings(const std::vector<const ModeResult*>& results) {
  std::string out;
  for (const ModeResult* r : results) {
    const std::string warning = overload_warning(*r, assess_load(*r));
    if (!warning.empty()) out += warning + "\n";
    const std::string rejected = rejection_text(*r);
    if (!rejected.empty()) out += "warning: " + rejected + ".\n";
    if (!r->replica_series.omitted.empty()) {
      out += "note: " + r->mode + ": " + r->replica_series.omitted + ".\n";
    }
  }
  return out;
}

}  // namespace infersim
