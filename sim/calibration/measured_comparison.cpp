#include "calibration/measured_comparison.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/input_error.hpp"
#include "core/number_format.hpp"

namespace infersim {
namespace {

std::string formatted(double value, const char* pattern) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

double mape_pct(const std::vector<MeasuredRow>& rows, double MeasuredRow::*measured,
                double MeasuredRow::*simulated) {
  double sum = 0;
  std::size_t n = 0;
  for (const MeasuredRow& r : rows) {
    if (!(r.*measured > 0)) continue;
    sum += std::abs(r.*simulated - r.*measured) / r.*measured;
    ++n;
  }
  return n > 0 ? 100 * sum / static_cast<double>(n) : 0;
}

}  // namespace

Measurement read_measured_for_replay(const std::string& path, const Settings& settings,
                                     const Trace& trace) {
  if (settings.mode == "synthetic") {
    throw InputError("", 0, "--measured",
                     "compares the recorded replay with its measurement; the synthetic mode has "
                     "none (use --recorded or --compare)");
  }
  Measurement m = read_measurement(path);
  if (m.requests.size() != trace.records.size()) {
    throw InputError(path, 0, "",
                     "holds " + std::to_string(m.requests.size()) +
                         " measured requests, the trace replays " +
                         std::to_string(trace.records.size()) +
                         ": requests are matched by order, so the counts must agree");
  }
  return m;
}

MeasuredComparison compare_with_measurement(const Measurement& m, const ModeResult& recorded) {
  if (recorded.log.size() != recorded.tasks.size()) {
    throw std::logic_error("compare_with_measurement: the recorded mode kept no outcomes");
  }
  if (recorded.tasks.size() != m.requests.size()) {
    throw InputError(m.path, 0, "--measured",
                     "the run simulated " + std::to_string(recorded.tasks.size()) + " requests (" +
                         std::to_string(recorded.dropped) +
                         " dropped after --duration), the measurement holds " +
                         std::to_string(m.requests.size()) + "; they are matched by order");
  }
  MeasuredComparison c;
  c.path = m.path;
  c.rows.reserve(m.requests.size());
  for (std::size_t k = 0; k < m.requests.size(); ++k) {
    const Request& task = recorded.tasks[k];
    const RequestOutcome o = recorded.log[k];
    MeasuredRow row;
    row.id = k;
    row.measured_ttft_s = m.requests[k].ttft_s;
    row.measured_e2e_s = m.requests[k].e2e_s;
    row.simulated_ttft_s = (o.first_token - task.arrival).seconds();
    row.simulated_e2e_s = (o.response - task.arrival).seconds();
    c.rows.push_back(row);
  }
  c.ttft_mape_pct = mape_pct(c.rows, &MeasuredRow::measured_ttft_s, &MeasuredRow::simulated_ttft_s);
  c.e2e_mape_pct = mape_pct(c.rows, &MeasuredRow::measured_e2e_s, &MeasuredRow::simulated_e2e_s);
  return c;
}

std::string measured_csv(const MeasuredComparison& c) {
  std::string out = "id,measured_ttft_s,simulated_ttft_s,measured_e2e_s,simulated_e2e_s\n";
  for (const MeasuredRow& r : c.rows) {
    out += std::to_string(r.id);
    for (double v : {r.measured_ttft_s, r.simulated_ttft_s, r.measured_e2e_s, r.simulated_e2e_s}) {
      out += ',';
      append_shortest(out, v);
    }
    out += '\n';
  }
  return out;
}

std::string measured_line(const MeasuredComparison& c) {
  return "measured   requests=" + std::to_string(c.rows.size()) +
         " ttft_mape=" + formatted(c.ttft_mape_pct, "%.4f") + " %" +
         " e2e_mape=" + formatted(c.e2e_mape_pct, "%.4f") + " % (" + c.path + ")";
}

nlohmann::ordered_json measured_to_json(const MeasuredComparison& c) {
  nlohmann::ordered_json out;
  out["file"] = c.path;
  out["requests"] = c.rows.size();
  out["ttft_mape"] = c.ttft_mape_pct;
  out["e2e_mape"] = c.e2e_mape_pct;
  return out;
}

void write_measured(const RunFolder& folder, const ScenarioResult& result,
                    const MeasuredComparison& comparison) {
  const std::filesystem::path dir =
      result.modes().size() > 1 ? folder.path() / "recorded" : folder.path();
  write_file_atomically(dir / "measured.csv", measured_csv(comparison));
  // summary.json was just written by write_run; the comparison joins it.
  const std::filesystem::path summary_path = dir / "summary.json";
  std::ifstream in(summary_path, std::ios::binary);
  if (!in) throw OutputError(summary_path.string() + ": cannot read it back");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json summary = nlohmann::ordered_json::parse(text.str());
  summary["measured"] = measured_to_json(comparison);
  write_file_atomically(summary_path, summary.dump(2) + "\n");
}

}  // namespace infersim
