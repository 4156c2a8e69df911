#include "report/closed_loop_beside.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/number_format.hpp"
#include "report/console_report.hpp"
#include "report/figure_text.hpp"
#include "report/report_html.hpp"
#include "report/run_folder.hpp"

namespace infersim {

namespace {

struct BesideRow {
  const char* label;
  const char* key;
  FigureUnit unit;
};

// The figures the comparison shows: what the closed loop changes.
const std::vector<BesideRow>& beside_rows() {
  static const std::vector<BesideRow> kRows = {
      {"Request throughput (req/s)", "request_throughput_rps", FigureUnit::kReqPerS},
      {"Benchmark duration", "benchmark_duration_s", FigureUnit::kSeconds},
      {"Peak concurrent requests", "max_concurrent_requests", FigureUnit::kCount},
      {"TTFT, mean", "ttft_mean_s", FigureUnit::kSeconds},
      {"TTFT, p99", "ttft_p99_s", FigureUnit::kSeconds},
      {"E2E latency, p99", "e2el_p99_s", FigureUnit::kSeconds},
      {"Wait, mean", "wait_mean_s", FigureUnit::kSeconds},
      {"Deadline met", "success_rate", FigureUnit::kShare},
  };
  return kRows;
}

std::string cell(const ModeResult* r, const BesideRow& row) {
  if (r == nullptr) return "";
  const std::optional<double> v = figure_value(r->summary, row.key);
  return v ? figure_text(*v, row.unit) : "n/a";
}

// What the closed loop leaves out, in one paragraph.
std::string hides(const ModeResult& recorded, const ModeResult& closed) {
  const auto value = [](const ModeResult& r, const char* key) {
    return figure_value(r.summary, key).value_or(0);
  };
  return "A closed loop of " + std::to_string(closed.max_concurrency) +
         " clients (the recorded hour's mean in flight) sends each request when a response "
         "comes back: it never holds more than " +
         std::to_string(closed.max_concurrency) + " (the recorded hour peaked at " +
         shortest(value(recorded, "max_concurrent_requests")) +
         "), so the queueing its bursts cause is not in it: a mean wait of " +
         duration_text(value(closed, "wait_mean_s")) + " against " +
         duration_text(value(recorded, "wait_mean_s")) + " recorded, TTFT p99 " +
         duration_text(value(closed, "ttft_p99_s")) + " against " +
         duration_text(value(recorded, "ttft_p99_s")) +
         " recorded. It also sets its own pace: the same requests took " +
         duration_text(value(closed, "benchmark_duration_s")) + " against the recorded " +
         duration_text(value(recorded, "benchmark_duration_s")) + ".";
}

}  // namespace

std::uint32_t clients_for(const ModeResult& recorded) {
  const double rate = figure_value(recorded.summary, "request_throughput_rps").value_or(0);
  const double e2e = figure_value(recorded.summary, "e2el_mean_s").value_or(0);
  const double in_flight = std::round(rate * e2e);
  return in_flight < 1 ? 1u : static_cast<std::uint32_t>(std::min(in_flight, 1e6));
}

std::string closed_loop_beside_text(const ModeResult& recorded, const ModeResult& closed,
                                    const ModeResult* synthetic) {
  std::vector<std::vector<std::string>> lines = {
      {"What a closed loop hides", "Recorded trace", mode_title(closed)}};
  if (synthetic != nullptr) lines.front().push_back(mode_title(*synthetic));
  for (const BesideRow& row : beside_rows()) {
    lines.push_back({row.label, cell(&recorded, row), cell(&closed, row)});
    if (synthetic != nullptr) lines.back().push_back(cell(synthetic, row));
  }
  return columns(lines) + hides(recorded, closed) + "\n";
}

RunSection closed_loop_beside_section(const ModeResult& recorded, const ModeResult& closed,
                                      const ModeResult* synthetic) {
  RunSection section;
  section.mode = recorded.mode;
  section.key = "closed_loop";
  section.summary = summary_to_json(closed);
  section.write_files = [&closed](const std::filesystem::path& folder, bool,
                                  PlotRendering&) -> std::vector<PlotScript> {
    const std::filesystem::path dir = folder / "closed-loop";
    std::filesystem::create_directories(dir);
    write_file_atomically(dir / "summary.json", summary_to_json(closed).dump(2) + "\n");
    write_file_atomically(dir / "cdf.csv", latency_cdf_csv(closed.latency_cdf));
    return {};
  };
  section.page.id = "closed-loop";
  section.page.heading = "What a closed loop hides";
  std::string table =
      "<table class=\"figures\" id=\"closed-loop-figures\">\n<thead><tr><th></th>"
      "<th>Recorded trace</th><th>" +
      html_escape(mode_title(closed)) + "</th>";
  if (synthetic != nullptr) table += "<th>" + html_escape(mode_title(*synthetic)) + "</th>";
  table += "</tr></thead>\n<tbody>\n";
  for (const BesideRow& row : beside_rows()) {
    table += "<tr><th scope=\"row\">" + html_escape(row.label) + "</th><td>" +
             html_escape(cell(&recorded, row)) + "</td><td>" + html_escape(cell(&closed, row)) +
             "</td>";
    if (synthetic != nullptr) table += "<td>" + html_escape(cell(synthetic, row)) + "</td>";
    table += "</tr>\n";
  }
  section.page.html =
      "<p>" + html_escape(hides(recorded, closed)) + "</p>\n" + table + "</tbody></table>\n";
  return section;
}

}  // namespace infersim
