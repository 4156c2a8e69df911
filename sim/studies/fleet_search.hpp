// The cheapest fleet: given a fleet's classes (BATCHING.md section 11), a
// range of counts for each and a target on the summary figures, the fleet of
// least cost an hour whose run meets the target. A fixed class's count is its
// replicas; an autoscaled class's is its autoscaling maximum (its minimum and
// the rest of its autoscale kept).
//
// The search assumes nothing of how a figure moves with the counts: it runs
// the fleets of the grid in order of the least they can cost an hour (then of
// replicas) and stops when that least is no less than the cheapest fleet
// found to meet the target, every fleet that could have been cheaper having
// been run. A fixed fleet costs exactly its least (count times price); an
// autoscaled class bills at least its minimum the whole run, and what it
// bills above that is known only once it has run, so its fleets are measured:
// their cost an hour is the run's cost_usd over its hours. No monotonicity
// prunes the search, because none holds: a router that does not know a
// replica's speed sends long prompts to slow replicas, so adding L40S
// replicas to H100 ones can raise TTFT p99 past a target the H100s alone met
// (tests/scenario/fleet_search_scenario_test.cpp shows it).
// `exhaustive` runs the whole grid, for the picture of cost against figure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/summary.hpp"
#include "scenario/settings.hpp"
#include "studies/capacity.hpp"
#include "trace/trace.hpp"

namespace infersim {

// A class the search sizes: its name and what a replica of it costs an hour
// (its GPUs times their price), and the counts tried, min to max (0: the
// class left out of the fleet).
struct FleetSearchClass {
  std::string name;
  double usd_per_replica_hour = 0;
  std::int64_t min = 0;
  std::int64_t max = 16;
  // An autoscaled class's autoscale.min: its count is then its autoscaling
  // maximum, tried from the larger of `min` and this (and 0 when min is 0).
  std::optional<std::int64_t> autoscale_min = std::nullopt;
  // Its side of a disaggregated fleet (BATCHING.md section 12): a fleet of
  // the search then holds a replica of each side.
  Role role = Role::kBoth;

  // The counts tried, in increasing order.
  std::vector<std::int64_t> counts() const;
};

struct FleetSearch {
  std::vector<FleetSearchClass> classes;  // in the fleet's order
  Target target;
  bool exhaustive = false;
};

// A fleet: a count a class, in the search's order.
using FleetCounts = std::vector<std::int64_t>;

struct FleetProbe {
  FleetCounts counts;
  // A fixed fleet's: the sum of count x cost of a replica-hour; with an
  // autoscaled class, the run's cost_usd over its hours (end_s).
  double usd_per_hour = 0;
  double least_usd_per_hour = 0;  // fleet_usd_per_hour, known before the run
  Summary summary;
  bool met = false;
};

struct FleetSearchResult {
  std::vector<FleetProbe> probes;       // every fleet run, in the order run
  std::optional<std::size_t> cheapest;  // index into probes: the answer
  std::vector<std::size_t> front;       // probes no other run beats on cost and figure
  std::uint64_t grid = 0;               // the fleets of the grid (at least one replica)
  std::string method;                   // "cost order" or "exhaustive"
  std::string reason;                   // why there is no answer; empty with one
};

// Throws InputError for no class, a range outside 0..max or inverted, a
// negative cost, every class free, a grid with no replica or over 100000
// fleets, or no target.
void check_fleet_search(const FleetSearch& search);

// The cost of a fleet an hour, its autoscaled classes at their minimum: a
// fixed fleet's cost, and the least an autoscaled one can bill.
double fleet_usd_per_hour(const FleetSearch& search, const FleetCounts& counts);
// Whether some class of the fleet autoscales (a count above 0 of a class that does).
bool fleet_autoscales(const FleetSearch& search, const FleetCounts& counts);

// "h100=4 l40s=1..8": the fleet as the console and the plots name it (an
// autoscaled class as its minimum..maximum).
std::string fleet_text(const FleetSearch& search, const FleetCounts& counts);

// Told of each run as it ends.
using FleetProbeDone = std::function<void(const FleetProbe&)>;

// Searches with `evaluate` giving the summary of a fleet (never called with
// no replica at all), in order of cost, stopping at the first fleet that meets
// the target unless exhaustive. The cheapest is the least usd_per_hour among
// the fleets run that meet the target (ties: the fewer replicas, then the
// first run). `front`: the runs that no
// other run beats on both cost (lower) and the target's first figure (better
// in the direction its comparison asks), ordered by cost.
FleetSearchResult search_fleets(const FleetSearch& search,
                                const std::function<Summary(const FleetCounts&)>& evaluate,
                                const FleetProbeDone& probe_done = {});

// The fleets of the grid (those with a replica): the most runs the search takes.
std::uint64_t fleet_search_max_runs(const FleetSearch& search);

// The classes of the settings' fleet, each's cost a replica-hour from its
// gpus and price, with counts from `min` to `max` (an autoscaled class's
// maximum, from its minimum up). Throws InputError naming batching.fleet when
// there is no fleet.
FleetSearch fleet_search_of(const Settings& settings, std::int64_t min, std::int64_t max,
                            const Target& target);

// The settings with each class at its count (a class at 0 left out; an
// autoscaled class with that maximum, its replicas at 0 within its bounds).
Settings with_fleet_counts(const Settings& base, const FleetCounts& counts);

// search_fleets on full runs of one mode ("recorded", "retimed" or "synthetic").
FleetSearchResult find_cheapest_fleet(const FleetSearch& search, const Settings& base,
                                      const std::string& mode, const Trace& trace,
                                      const FleetProbeDone& probe_done = {});

// One mode's object of capacity.json: {"fleet": {class: count} or null,
// "usd_per_hour", the target's figures and usd_per_million_tokens at it,
// "reason" when there is none, "method", "grid", "runs", "front": [run
// numbers], "steps": every run in the order run}.
nlohmann::ordered_json fleet_search_to_json(const FleetSearch& search,
                                            const FleetSearchResult& result);

// capacity.csv of a fleet search: `mode,run,<class counts>,usd_per_hour,met,
// front,<figure keys>`, a row a run, each mode's in the order run.
std::string fleet_search_csv(const FleetSearch& search, const std::vector<std::string>& modes,
                             const std::vector<FleetSearchResult>& results,
                             const std::vector<std::string>& figure_keys);

}  // namespace infersim
