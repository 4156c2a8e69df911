#include "report/console_report.hpp"

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

std::string replay_line(const GeneratedTasks& r) {
  const std::size_t n = r.tasks.size();
  std::string line = "Trace replay: " + std::to_string(n) + " requests scheduled";
  if (n > 0) {
    line += " between " + brief_seconds(r.tasks.front().arrival) + " and " +
            brief_seconds(r.tasks.back().arrival) + " s";
  }
  line += ", " + std::to_string(r.dropped) +
          " dropped because they arrive after the end of the run at " +
          brief_seconds(r.run_length) + " s.";
  return line;
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

}  // namespace infersim
