#include "scenario/capacity.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/input_error.hpp"
#include "core/json_number.hpp"
#include "core/percentiles.hpp"
#include "model/replica_class.hpp"
#include "model/step_cost.hpp"
#include "report/csv_field.hpp"
#include "report/figure_text.hpp"
#include "report/number_format.hpp"
#include "request/synthetic_request_generator.hpp"
#include "scenario/scenario.hpp"
#include "scenario/sweep.hpp"

namespace infersim {
namespace {

std::string trimmed(const std::string& text) {
  const std::size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const std::size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

TargetClause parse_clause(const std::string& clause, const std::vector<std::string>& keys) {
  const auto malformed = [&](const std::string& why) {
    throw InputError("", 0, "--target",
                     why + " in '" + clause +
                         "'; expected KEY OP NUMBER with OP one of >= <= > < ==, e.g. "
                         "success_rate>=0.99");
  };
  const std::size_t at = clause.find_first_of("<>=!");
  if (at == std::string::npos) malformed("no comparison");
  TargetClause out;
  std::size_t length = 1;
  const char next = at + 1 < clause.size() ? clause[at + 1] : '\0';
  switch (clause[at]) {
    case '>':
      out.comparison = next == '=' ? TargetClause::kAtLeast : TargetClause::kAbove;
      length = next == '=' ? 2 : 1;
      break;
    case '<':
      out.comparison = next == '=' ? TargetClause::kAtMost : TargetClause::kBelow;
      length = next == '=' ? 2 : 1;
      break;
    case '=':
      if (next != '=') malformed("'=' is not a comparison (write ==)");
      out.comparison = TargetClause::kEqual;
      length = 2;
      break;
    default:
      malformed("'" + std::string(1, clause[at]) + "' is not a comparison");
  }
  out.key = trimmed(clause.substr(0, at));
  if (out.key.empty()) malformed("no figure");
  if (std::find(keys.begin(), keys.end(), out.key) == keys.end()) {
    const auto near = nearest(out.key, keys);
    throw InputError("", 0, "--target",
                     "unknown figure '" + out.key + "'" +
                         (near ? " (did you mean " + *near + "?)" : std::string()) +
                         "; the figures are summary.json's keys");
  }
  const std::string number = trimmed(clause.substr(at + length));
  const auto r = std::from_chars(number.data(), number.data() + number.size(), out.value);
  if (number.empty() || r.ec != std::errc() || r.ptr != number.data() + number.size() ||
      !std::isfinite(out.value)) {
    malformed("'" + number + "' is not a number");
  }
  return out;
}

std::string value_text(const CapacitySearch& search, double value) {
  return search.knob + "=" + capacity_value_text(search, value);
}

}  // namespace

std::string comparison_text(TargetClause::Comparison comparison) {
  switch (comparison) {
    case TargetClause::kAtLeast:
      return ">=";
    case TargetClause::kAtMost:
      return "<=";
    case TargetClause::kAbove:
      return ">";
    case TargetClause::kBelow:
      return "<";
    case TargetClause::kEqual:
      return "==";
  }
  return "?";
}

bool TargetClause::holds(std::optional<double> figure) const {
  if (!figure) return false;
  switch (comparison) {
    case kAtLeast:
      return *figure >= value;
    case kAtMost:
      return *figure <= value;
    case kAbove:
      return *figure > value;
    case kBelow:
      return *figure < value;
    case kEqual:
      return *figure == value;
  }
  return false;
}

bool Target::met_by(const Summary& summary) const {
  for (const TargetClause& clause : clauses) {
    if (!clause.holds(summary.get(clause.key))) return false;
  }
  return true;
}

std::vector<std::string> Target::keys() const {
  std::vector<std::string> out;
  for (const TargetClause& clause : clauses) {
    if (std::find(out.begin(), out.end(), clause.key) == out.end()) out.push_back(clause.key);
  }
  return out;
}

Target parse_target(const std::string& text, const std::vector<std::string>& keys) {
  Target target;
  target.text = text;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = text.find(',', begin);
    const std::string clause =
        trimmed(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (clause.empty()) {
      throw InputError("", 0, "--target",
                       "empty clause in '" + text + "'; expected e.g. success_rate>=0.99");
    }
    target.clauses.push_back(parse_clause(clause, keys));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return target;
}

nlohmann::json capacity_value_json(const CapacitySearch& search, double value) {
  if (search.whole) return static_cast<std::uint64_t>(value);
  return value;
}

void check_capacity_search(const CapacitySearch& search) {
  const double tolerance = search.tolerance;
  if (!(tolerance > 0 && tolerance < 1)) {
    throw InputError("", 0, "--tolerance",
                     "must be greater than 0 and below 1, got " + shortest(tolerance));
  }
  if (!(search.min <= search.max)) {
    throw InputError("", 0, "--min",
                     shortest(search.min) + " is above --max " + shortest(search.max));
  }
  if (search.whole) {
    for (const double bound : {search.min, search.max}) {
      if (!(bound >= 0 && bound == std::floor(bound) && bound < 9007199254740992.0)) {
        throw InputError("", 0, "--" + search.knob,
                         "bounds must be whole numbers, got " + shortest(bound));
      }
    }
  }
  if (search.target.clauses.empty()) throw InputError("", 0, "--target", "no target given");
}

std::string capacity_value_text(const CapacitySearch& search, double value) {
  if (search.whole) return std::to_string(static_cast<std::uint64_t>(value));
  return shortest(value);
}

CapacityResult bisect_capacity(const CapacitySearch& search,
                               const std::function<Summary(double)>& evaluate,
                               const CapacityProbeDone& probe_done) {
  check_capacity_search(search);
  const double tolerance = search.tolerance;

  CapacityResult result;
  const auto probe = [&](double value) {
    for (const CapacityProbe& p : result.probes) {
      if (p.value == value) return p;
    }
    CapacityProbe p;
    p.value = value;
    p.summary = evaluate(value);
    p.met = search.target.met_by(p.summary);
    result.probes.push_back(p);
    if (probe_done) probe_done(p);
    return p;
  };

  // The bounds first: a target the maximum misses has no answer, and one the
  // minimum meets needs no search.
  CapacityProbe high = probe(search.max);
  if (!high.met) {
    result.outcome = CapacityResult::kMaximumFails;
    result.below = high;
    result.reason = "even the maximum, " + value_text(search, search.max) + ", fails the target";
    return result;
  }
  CapacityProbe low = probe(search.min);
  if (low.met) {
    result.outcome = CapacityResult::kMinimumMeets;
    result.answer = low;
    result.reason = "the minimum, " + value_text(search, search.min) +
                    ", already meets the target; nothing below it was searched";
    return result;
  }
  // Invariant: `low` fails, `high` meets.
  const double floor_width = tolerance * tolerance * (search.max - search.min);
  for (;;) {
    const double width = high.value - low.value;
    double middle = 0;
    if (search.whole) {
      if (width <= 1) break;
      middle = std::floor(low.value + width / 2);
    } else {
      if (width <= tolerance * std::abs(high.value) || width <= floor_width) break;
      middle = low.value + width / 2;
      if (middle <= low.value || middle >= high.value) break;  // no double between
    }
    const CapacityProbe p = probe(middle);
    (p.met ? high : low) = p;
  }
  result.answer = high;
  result.below = low;
  return result;
}

std::size_t capacity_max_runs(const CapacitySearch& search) {
  // Each halving at least halves the bracket (whole knobs: to neighbours).
  const auto halvings = [](double ratio) {
    return ratio > 1 ? static_cast<std::size_t>(std::ceil(std::log2(ratio))) : 0;
  };
  const double tolerance = search.tolerance;
  const std::size_t inner =
      search.whole ? halvings(search.max - search.min) : halvings(1 / (tolerance * tolerance));
  return (search.min == search.max ? 1 : 2) + inner;
}

Settings with_knob(const Settings& base, const CapacitySearch& search, double value) {
  Settings settings = base;
  set_setting(settings, search.key, capacity_value_json(search, value), "", "--" + search.knob);
  validate_settings(settings, "");
  return settings;
}

namespace {

// "ttft_p99_s" -> 0.99; none for any other key.
std::optional<double> ttft_percentile(const std::string& key) {
  if (key.rfind("ttft_p", 0) != 0 || !key.ends_with("_s")) return std::nullopt;
  const std::string digits = key.substr(6, key.size() - 8);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stod(digits) / std::pow(10.0, static_cast<double>(digits.size()));
}

}  // namespace

// Each request's prefill on an idle replica of its own (of the class that
// prefills it soonest, in a fleet), in steps of at most max_num_batched_tokens
// tokens (model/step_cost.hpp), plus the network's latency up and down, is a
// lower bound on its TTFT.
std::string idle_bound_reason(const Settings& settings, const Trace& trace, const std::string& mode,
                              const Target& target) {
  if (server_section(settings.server_kind) != "batching" || trace.records.empty()) return "";
  std::vector<BatchingKnobs> classes;
  if (settings.fleet) {
    for (const ReplicaClass& c : fleet_classes(settings))
      classes.push_back(c.knobs);
  } else {
    classes.push_back(settings.batching);
  }
  std::vector<StepCost> costs;
  for (const BatchingKnobs& k : classes)
    costs.push_back(StepCost::of(k));
  double latency_s = 0;
  for (const Hop& hop : settings.hops)
    latency_s += 2 * hop.latency_s;
  const auto prefill_s = [&](double prompt) {
    double fastest = std::numeric_limits<double>::infinity();
    const auto tokens = static_cast<std::int64_t>(std::max(1.0, std::round(prompt)));
    for (std::size_t c = 0; c < classes.size(); ++c) {
      fastest = std::min(fastest,
                         idle_prefill_seconds(costs[c], tokens, classes[c].max_num_batched_tokens));
    }
    return fastest;
  };
  std::vector<double> bounds;
  if (mode == "synthetic" && settings.synthetic_sizes == "mean") {
    bounds.push_back(prefill_s(trace_rates(trace, settings.arrival_knobs()).mean_context_tokens) +
                     latency_s);
  } else {
    bounds.reserve(trace.records.size());
    for (const TraceRecord& r : trace.records)
      bounds.push_back(prefill_s(r.context_tokens) + latency_s);
  }
  for (const TargetClause& c : target.clauses) {
    const std::optional<double> q = ttft_percentile(c.key);
    if (!q || (c.comparison != TargetClause::kAtMost && c.comparison != TargetClause::kBelow)) {
      continue;
    }
    std::vector<double> values = bounds;
    const std::optional<double> at = percentile(values, *q);
    if (!at || c.holds(*at)) continue;
    return "on idle replicas the " + c.key + " would already be " + duration_text(*at) +
           " (each prompt's own prefill" + (classes.size() > 1 ? " on its fastest class" : "") +
           ", in steps of at most " + std::to_string(classes.front().max_num_batched_tokens) +
           " tokens, and the network's latency), past the target's " + duration_text(c.value) +
           ": no count of replicas meets it";
  }
  return "";
}

CapacityResult find_capacity(const CapacitySearch& search, const Settings& base,
                             const std::string& mode, const Trace& trace,
                             const CapacityProbeDone& probe_done) {
  CapacityResult result = bisect_capacity(
      search,
      [&](double value) { return run_mode(with_knob(base, search, value), trace, mode).summary; },
      probe_done);
  if (result.outcome == CapacityResult::kMaximumFails) {
    const std::string why =
        idle_bound_reason(with_knob(base, search, search.max), trace, mode, search.target);
    if (!why.empty()) result.reason += "; " + why;
  }
  return result;
}

nlohmann::ordered_json capacity_to_json(const CapacitySearch& search,
                                        const CapacityResult& result) {
  const auto figures = [&](const CapacityProbe& p) {
    nlohmann::ordered_json out;
    out[search.knob] = capacity_value_json(search, p.value);
    for (const std::string& key : search.target.keys()) {
      const std::optional<double> value = p.summary.get(key);
      out[key] = json_number(value);
    }
    return out;
  };
  nlohmann::ordered_json out;
  switch (result.outcome) {
    case CapacityResult::kFound:
      out = figures(*result.answer);
      out["below"] = figures(*result.below);
      break;
    case CapacityResult::kMinimumMeets:
      out = figures(*result.answer);
      out["below"] = nullptr;
      out["reason"] = result.reason;
      break;
    case CapacityResult::kMaximumFails:
      out[search.knob] = nullptr;
      out["reason"] = result.reason;
      out["at_max"] = figures(*result.below);
      break;
  }
  out["runs"] = result.probes.size();
  out["steps"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < result.probes.size(); ++i) {
    const CapacityProbe& p = result.probes[i];
    nlohmann::ordered_json step;
    step["run"] = i + 1;
    step[search.knob] = capacity_value_json(search, p.value);
    step["met"] = p.met;
    for (const std::string& key : search.target.keys()) {
      const std::optional<double> value = p.summary.get(key);
      step[key] = json_number(value);
    }
    out["steps"].push_back(step);
  }
  return out;
}

std::string capacity_csv(const CapacitySearch& search, const std::vector<std::string>& modes,
                         const std::vector<CapacityResult>& results,
                         const std::vector<std::string>& figure_keys) {
  std::string out = "mode,run," + csv_field(search.knob) + ",met";
  for (const std::string& key : figure_keys)
    out += "," + key;
  out += '\n';
  for (std::size_t m = 0; m < modes.size() && m < results.size(); ++m) {
    for (std::size_t i = 0; i < results[m].probes.size(); ++i) {
      const CapacityProbe& p = results[m].probes[i];
      out += modes[m] + "," + std::to_string(i + 1) + "," + capacity_value_text(search, p.value) +
             (p.met ? ",true" : ",false");
      append_figure_fields(out, figure_keys, p.summary);
      out += '\n';
    }
  }
  return out;
}

}  // namespace infersim
