#include "studies/capacity.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/input_error.hpp"
#include "core/json_number.hpp"
#include "core/number_format.hpp"
#include "core/percentiles.hpp"
#include "model/replica_class.hpp"
#include "model/step_cost.hpp"
#include "report/csv_field.hpp"
#include "report/figure_text.hpp"
#include "request/synthetic_request_generator.hpp"
#include "scenario/scenario.hpp"
#include "studies/sweep.hpp"

namespace infersim {
namespace {

// The summary's figures that only some runs have, and what gives them.
std::optional<std::string> figure_condition(const std::string& key) {
  static const std::pair<const char*, const char*> kConditional[] = {
      {"good_requests", "a run given --goodput (vLLM's SLOs, e.g. --goodput ttft:2000 e2el:10000)"},
      {"good_request_fraction",
       "a run given --goodput (vLLM's SLOs, e.g. --goodput ttft:2000 e2el:10000)"},
      {"goodput_rps", "a run given --goodput (vLLM's SLOs, e.g. --goodput ttft:2000 e2el:10000)"},
      {"rejected", "the batching server (--server batching)"},
      {"preemptions", "the batching server (--server batching)"},
      {"evicted_blocks", "the batching server (--server batching)"},
      {"prefix_hit_rate", "the batching server (--server batching)"},
      {"steps", "the batching server (--server batching)"},
      {"avg_batch_requests", "the batching server (--server batching)"},
      {"kv_peak_utilization", "the batching server (--server batching)"},
      {"replica_hours", "a fleet (batching.fleet)"},
      {"gpu_hours", "a fleet (batching.fleet)"},
      {"cost_usd", "a fleet (batching.fleet)"},
      {"usd_per_million_tokens", "a fleet (batching.fleet)"},
      {"peak_replicas", "a fleet (batching.fleet)"},
      {"scale_ups", "a fleet (batching.fleet)"},
      {"scale_downs", "a fleet (batching.fleet)"},
      {"kv_transfers", "a fleet split into prefill and decode classes (role)"},
      {"kv_transfer_gb", "a fleet split into prefill and decode classes (role)"},
      {"kv_transfer_p50_s", "a fleet split into prefill and decode classes (role)"},
      {"kv_transfer_p99_s", "a fleet split into prefill and decode classes (role)"},
      {"decode_wait_p99_s", "a fleet split into prefill and decode classes (role)"},
  };
  for (const auto& [name, when] : kConditional)
    if (key == name) return std::string(when);
  return std::nullopt;
}

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
    if (const std::optional<std::string> when = figure_condition(out.key)) {
      throw InputError("", 0, "--target",
                       "'" + out.key + "' is a figure only of " + *when +
                           ", and this run has none; the figures are summary.json's keys");
    }
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

std::pair<std::size_t, double> Target::miss(const Summary& summary) const {
  std::pair<std::size_t, double> out{0, 0.0};
  for (const TargetClause& clause : clauses) {
    const std::optional<double> figure = summary.get(clause.key);
    if (clause.holds(figure)) continue;
    ++out.first;
    out.second += figure
                      ? std::fabs(*figure - clause.value) / std::max(std::fabs(clause.value), 1e-12)
                      : std::numeric_limits<double>::infinity();
  }
  return out;
}

std::string Target::reached(const Summary& summary) const {
  std::string out;
  for (const std::string& key : keys()) {
    const std::optional<double> value = summary.get(key);
    out += (out.empty() ? "" : ", ") + key + "=" + (value ? printf_text("%.6g", *value) : "null");
  }
  return out;
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
    result.reason = "even the maximum, " + value_text(search, search.max) +
                    ", fails the target (it reached " + search.target.reached(high.summary) + ")";
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

namespace {

// The most of each request's prompt that it could find cached when it reaches
// the server (BATCHING.md sections 3 and 4): its leading blocks whose
// identities some earlier request of the run could have registered, up to the
// first that none could, at most (p - 1) div B of them; 0 for a request the
// server rejects (p + o > L), which registers nothing. An upper bound on any
// replica's hit, whatever the routing and the evictions.
std::vector<std::int64_t> most_cached_tokens(const RequestList& tasks, const BatchingKnobs& k) {
  std::vector<std::int64_t> hits(tasks.size(), 0);
  if (!k.prefix_caching || !tasks.has_block_ids()) return hits;
  const std::int64_t b = k.block_tokens;
  const std::int64_t len = k.model_len();
  // An id's blocks registered so far: its first n (B-token) blocks.
  std::unordered_map<std::uint32_t, std::int64_t> seen;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Request r = tasks[i];
    const std::int64_t p = std::max<std::int64_t>(1, std::llround(r.context_tokens));
    const std::int64_t o = std::llround(r.generated_tokens);
    if (p + o > len) continue;
    const std::int64_t per_id = r.block_id_tokens / b;  // B divides Bh (section 1)
    const std::int64_t with_identity =
        std::min<std::int64_t>(p,
                               static_cast<std::int64_t>(r.block_ids.size()) * r.block_id_tokens) /
        b;
    std::int64_t hit = 0;
    bool missed = false;
    for (std::size_t t = 0; t < r.block_ids.size(); ++t) {
      const std::int64_t here = std::clamp<std::int64_t>(
          with_identity - static_cast<std::int64_t>(t) * per_id, 0, per_id);
      if (here == 0) break;
      std::int64_t& known = seen[r.block_ids[t]];
      if (!missed) {
        const std::int64_t found = std::min(here, known);
        hit += found;
        missed = found < here;
      }
      known = std::max(known, here);
    }
    hits[i] = std::min(hit, (p - 1) / b) * b;
  }
  return hits;
}

}  // namespace

// Each served request's prefill on an idle replica of its own (of the class
// that prefills it soonest, in a fleet), with the most of its prompt it could
// find cached, in steps of at most max_num_batched_tokens tokens
// (model/step_cost.hpp), plus the network's latency up and down, is a lower
// bound on its TTFT; a mode's TTFT percentile is then at least the bounds'
// (their mean over a synthetic mode's replications).
std::string idle_bound_reason(const Settings& settings, const Trace& trace, const std::string& mode,
                              const Target& target) {
  if (server_section(settings.server_kind) != "batching" || trace.records.empty()) return "";
  // A synthetic mode of empirical sizes draws prompts apart from the trace's
  // records, seed by seed: its requests are made as the run makes them.
  const ServerChoice choice = server_choice(settings);
  std::vector<BatchingKnobs> classes;
  if (settings.fleet) {
    for (const ReplicaClass& c : choice.fleet)
      classes.push_back(c.knobs);
  } else {
    classes.push_back(choice.batching);
  }
  std::vector<StepCost> costs;
  for (const BatchingKnobs& k : classes)
    costs.push_back(StepCost::of(k));
  double latency_s = 0;
  for (const Hop& hop : settings.hops)
    latency_s += 2 * hop.latency_s;
  const auto prefill_s = [&](std::int64_t prompt, std::int64_t cached) {
    double fastest = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < classes.size(); ++c) {
      fastest = std::min(fastest, idle_prefill_seconds(costs[c], prompt,
                                                       classes[c].max_num_batched_tokens, cached));
    }
    return fastest;
  };
  // The bounds of each run of the mode (a seed each for a synthetic mode).
  std::vector<std::vector<double>> runs;
  const auto bounds_of = [&](const RequestList& tasks) {
    const std::vector<std::int64_t> cached = most_cached_tokens(tasks, classes.front());
    const std::int64_t len = classes.front().model_len();
    std::vector<double> bounds;
    bounds.reserve(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const std::int64_t p = std::max<std::int64_t>(1, std::llround(tasks.context_tokens(i)));
      const std::int64_t o = std::llround(tasks.generated_tokens(i));
      if (p + o > len) continue;  // rejected: in no latency figure
      bounds.push_back(prefill_s(p, cached[i]) + latency_s);
    }
    runs.push_back(std::move(bounds));
  };
  if (mode == "recorded") {
    bounds_of(generate_recorded(settings, trace).tasks);
  } else {
    Settings synthetic = settings;
    if (mode == "retimed") synthetic.synthetic_sizes = "recorded";
    for (std::uint32_t i = 0; i < settings.replications; ++i)
      bounds_of(generate_synthetic(synthetic, trace, settings.seed + i).tasks);
  }
  for (const TargetClause& c : target.clauses) {
    const std::optional<double> q = ttft_percentile(c.key);
    if (!q || (c.comparison != TargetClause::kAtMost && c.comparison != TargetClause::kBelow)) {
      continue;
    }
    double sum = 0;
    bool every = true;
    for (const std::vector<double>& bounds : runs) {
      std::vector<double> values = bounds;
      const std::optional<double> at = percentile(values, *q);
      every = every && at.has_value();
      if (at) sum += *at;
    }
    if (!every || runs.empty()) continue;
    const double at = sum / static_cast<double>(runs.size());
    if (c.holds(at)) continue;
    return "on idle replicas the " + c.key + " would already be at least " + duration_text(at) +
           " (each served prompt's own prefill" +
           (classes.size() > 1 ? " on its fastest class" : "") +
           ", less the most of it an earlier request could have left cached, in steps of at "
           "most " +
           std::to_string(classes.front().max_num_batched_tokens) +
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
