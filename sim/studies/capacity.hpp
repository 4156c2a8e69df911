// Capacity planning: the smallest value of one knob whose run meets a target on
// the summary figures (success_rate>=0.99, ttft_p99_s<=2), found by bisection
// on the assumption that meeting the target is monotone in the knob.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/summary.hpp"
#include "scenario/settings.hpp"
#include "trace/trace.hpp"

namespace infersim {

struct TargetClause {
  enum Comparison { kAtLeast, kAtMost, kAbove, kBelow, kEqual };
  std::string key;  // a summary key
  Comparison comparison = kAtLeast;
  double value = 0;
  bool holds(std::optional<double> figure) const;  // a missing figure never holds
};

// ">=", "<=", ">", "<" or "==".
std::string comparison_text(TargetClause::Comparison comparison);

struct Target {
  std::string text;  // as given
  std::vector<TargetClause> clauses;
  bool met_by(const Summary& summary) const;  // every clause holds
  // The keys named, each once, in the order given.
  std::vector<std::string> keys() const;
  // How far a summary is from the target: the clauses it fails, then the sum
  // of their misses relative to their bounds (a missing figure misses
  // infinitely); {0, 0} when met. Compared as a pair: less is closer.
  std::pair<std::size_t, double> miss(const Summary& summary) const;
  // "ttft_p99_s=4.21, success_rate=0.98": the target's figures in a summary.
  std::string reached(const Summary& summary) const;
};

// "KEY OP NUMBER[,KEY OP NUMBER...]" with OP one of >= <= > < ==; every clause
// must hold. `keys` are the figures a run has (summary_keys of its settings).
// Throws InputError naming --target for a malformed clause or an unknown key
// (suggesting the nearest).
Target parse_target(const std::string& text, const std::vector<std::string>& keys);

struct CapacitySearch {
  std::string knob;    // the flag without dashes, e.g. "cores"; names the value in output
  std::string key;     // the settings key, e.g. "server.cores"
  bool whole = false;  // bisect over whole numbers
  double min = 0;
  double max = 0;
  double tolerance = 1e-3;  // real knobs: relative width of the final bracket
  Target target;
};

struct CapacityProbe {
  double value = 0;
  Summary summary;
  bool met = false;
};

struct CapacityResult {
  enum Outcome {
    kFound,         // min fails, max meets: the answer lies between
    kMinimumMeets,  // the minimum already meets the target: the answer is min
    kMaximumFails,  // even the maximum fails: no answer
  } outcome = kFound;
  std::optional<CapacityProbe> answer;  // the smallest tested value that meets the target
  // Whole knobs: answer - 1; real knobs: the largest tested value that fails.
  // For kMaximumFails, the maximum itself.
  std::optional<CapacityProbe> below;
  std::vector<CapacityProbe> probes;  // every run, in the order run
  // Why there is no answer, or nothing below it; empty for kFound.
  std::string reason;
};

// A knob value as output shows it: a whole knob as an integer, a real one in
// its shortest round-trip form.
nlohmann::json capacity_value_json(const CapacitySearch& search, double value);
std::string capacity_value_text(const CapacitySearch& search, double value);

// Throws InputError for min > max, a tolerance outside (0, 1), whole bounds
// that are not whole, or no target.
void check_capacity_search(const CapacitySearch& search);

// Told of each run as it ends (from the thread that ran it).
using CapacityProbeDone = std::function<void(const CapacityProbe&)>;

// Bisects with `evaluate` giving the summary at a knob value: the maximum
// first, then the minimum, then halving the bracket (whole knobs until the two
// ends are neighbours; real knobs until its width is at most tolerance × the
// value found, or tolerance² × (max - min) near zero). Checks the search
// first (check_capacity_search).
CapacityResult bisect_capacity(const CapacitySearch& search,
                               const std::function<Summary(double)>& evaluate,
                               const CapacityProbeDone& probe_done = {});

// The most runs bisect_capacity can take on this search: the two bounds and
// the halvings.
std::size_t capacity_max_runs(const CapacitySearch& search);

// The settings with the knob at `value` (a whole knob as an integer).
Settings with_knob(const Settings& base, const CapacitySearch& search, double value);

// Why a TTFT target cannot be met by any count of batching replicas, or "":
// when a TTFT percentile the target bounds is already past it with every
// request prefilled alone on an idle replica (of its fastest class, in a
// fleet), more replicas cannot help. "" too for a server that does not batch.
std::string idle_bound_reason(const Settings& settings, const Trace& trace, const std::string& mode,
                              const Target& target);

// bisect_capacity on full runs of one mode ("recorded" or "synthetic").
CapacityResult find_capacity(const CapacitySearch& search, const Settings& base,
                             const std::string& mode, const Trace& trace,
                             const CapacityProbeDone& probe_done = {});

// One mode's object of capacity.json: {"<knob>": value or null, the target's
// figures at it, "below": {...} or null, "reason" when there is one, "runs": n,
// "steps": every run in the order run, [{"run": 1, "<knob>": value, "met":
// bool, the target's figures}, ...]}.
nlohmann::ordered_json capacity_to_json(const CapacitySearch& search, const CapacityResult& result);

// capacity.csv: `mode,run,<knob>,met,<figure keys>`, then a row a run, each
// mode's in the order run (run counts from 1 within the mode), met as true or
// false and the figures as summary.csv writes them. `results` go with `modes`.
std::string capacity_csv(const CapacitySearch& search, const std::vector<std::string>& modes,
                         const std::vector<CapacityResult>& results,
                         const std::vector<std::string>& figure_keys);

}  // namespace infersim
