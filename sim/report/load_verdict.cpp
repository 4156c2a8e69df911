#include "report/load_verdict.hpp"

#include <algorithm>

#include "core/number_format.hpp"
#include "report/figure_text.hpp"

namespace infersim {

LoadVerdict assess_load(const ModeResult& r) {
  LoadVerdict v;
  if (r.tasks.empty()) return v;
  // The first seed's figures, as its requests and time series are.
  const Summary& s = r.replications.empty() ? r.summary : r.replications.front();
  const SimTime first = r.tasks.arrival(0);
  const SimTime last = r.tasks.arrival(r.tasks.size() - 1);
  v.span_s = (last - first).seconds();
  v.mean_budget_s = figure_value(s, "avg_budget_s").value_or(0);
  const auto requests = figure_value(s, "requests").value_or(0);
  const auto rejected = figure_value(s, "rejected").value_or(0);
  v.served = static_cast<std::uint64_t>(std::max(0.0, requests - rejected));

  const auto compute = figure_value(s, "compute_s");
  // Only the edge server's busy time is its requests' own execution times
  // (avg_exec_s exists exactly then).
  const bool own_costs = figure_value(s, "avg_exec_s").has_value();
  if (own_costs && compute && r.server.units > 0 && v.span_s > 0) {
    v.offered_load = *compute / (static_cast<double>(r.server.units) * v.span_s);
    v.offered_exceeds_capacity = *v.offered_load > 1;
  }
  if (const auto duration = figure_value(s, "benchmark_duration_s")) {
    // The benchmark runs from the first arrival to the last response.
    v.drain_s = std::max(0.0, first.seconds() + *duration - last.seconds());
  }
  v.drains_long = v.drain_s > kDrainShareOfSpan * v.span_s && v.drain_s > v.mean_budget_s;
  v.overloaded = v.offered_exceeds_capacity || v.drains_long;

  // The slice holding the last arrival: what was still unanswered at its end,
  // and how busy the server was up to it.
  std::uint64_t answered = 0;
  double busy = 0;
  double length = 0;
  bool any_busy = false;
  for (const TimeSlice& slice : r.time_series.slices) {
    answered += slice.completions;
    const double slice_s = (slice.end - slice.start).seconds();
    if (slice.utilization) {
      busy += *slice.utilization * slice_s;
      length += slice_s;
      any_busy = true;
    }
    v.arrivals_end_s = slice.end.seconds();
    if (last < slice.end) break;
  }
  v.unanswered = v.served > answered ? v.served - answered : 0;
  if (any_busy && length > 0) v.busy_while_arriving = busy / length;
  return v;
}

namespace {

std::string unanswered_text(const LoadVerdict& v) {
  return std::to_string(v.unanswered) + " of the " + std::to_string(v.served) +
         " requests served were still unanswered when the arrivals' last slice ended (at " +
         duration_text(v.arrivals_end_s) + ")";
}

}  // namespace

std::string overload_text(const ModeResult& r, const LoadVerdict& v) {
  if (!v.overloaded) return "";
  std::vector<std::string> parts;
  if (v.offered_exceeds_capacity) {
    parts.push_back("the requests ask " + fixed(*v.offered_load, 2) + " times what the " +
                    units_text(r) + " can do (" +
                    duration_text(*v.offered_load * r.server.units * v.span_s) +
                    " of execution over the " + duration_text(v.span_s) + " the arrivals span)");
  }
  if (v.drains_long) {
    std::string drain =
        "the last response comes " + duration_text(v.drain_s) + " after the last arrival";
    if (!v.offered_exceeds_capacity) {
      drain += " (" + fixed(v.span_s > 0 ? 100 * v.drain_s / v.span_s : 100, 0) + " % of the " +
               duration_text(v.span_s) +
               " the arrivals span, and more than the mean deadline budget of " +
               duration_text(v.mean_budget_s) + ")";
    }
    parts.push_back(drain);
  } else if (v.drain_s > 0) {
    parts.push_back("the last response comes " + duration_text(v.drain_s) +
                    " after the last arrival");
  }
  parts.push_back(unanswered_text(v));
  if (v.busy_while_arriving && !v.offered_load) {
    const Summary& first = r.replications.empty() ? r.summary : r.replications.front();
    parts.push_back(busy_units_text(r, first) + " busy " + fixed(*v.busy_while_arriving * 100, 1) +
                    " % of the time until then");
  }
  // What it cost: the deadlines met (the mode's figure, a mean when replicated).
  const Summary& s = r.summary;
  if (const auto met = figure_value(s, "deadline_met")) {
    const int decimals = r.replications.empty() ? 0 : 1;
    parts.push_back(fixed(*met, decimals) + " of the " +
                    fixed(figure_value(s, "requests").value_or(0), decimals) +
                    " requests met their deadline");
  }
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i)
    text += (i == 0 ? "" : "; ") + parts[i];
  return text;
}

std::string overload_warning(const ModeResult& r, const LoadVerdict& v) {
  if (!v.overloaded) return "";
  return "warning: " + series_label(r) + " overloaded: " + overload_text(r, v) + ".";
}

std::string rejection_text(const ModeResult& r) {
  const double rejected = figure_value(r.summary, "rejected").value_or(0);
  const double requests = figure_value(r.summary, "requests").value_or(0);
  if (requests <= 0 || rejected <= requests / 2) return "";
  const int decimals = r.replications.empty() ? 0 : 1;
  return series_label(r) + ": " + fixed(rejected, decimals) + " of the " +
         fixed(requests, decimals) + " requests (" + fixed(100 * rejected / requests, 1) +
         " %) were refused on arrival: " +
         (r.rejection_limit.empty() ? std::string("the server's limit") : r.rejection_limit);
}

}  // namespace infersim
