#include "studies/fleet_search.hpp"

#include <algorithm>
#include <cmath>

#include "core/input_error.hpp"
#include "core/json_number.hpp"
#include "core/number_format.hpp"
#include "model/replica_class.hpp"
#include "report/csv_field.hpp"
#include "report/figure_text.hpp"
#include "scenario/scenario.hpp"
#include "studies/sweep.hpp"

namespace infersim {
namespace {

std::int64_t total(const FleetCounts& counts) {
  std::int64_t n = 0;
  for (const std::int64_t c : counts)
    n += c;
  return n;
}

// Whether a higher value of the target's first figure is the better one.
bool higher_is_better(const Target& target) {
  const TargetClause::Comparison c = target.clauses.front().comparison;
  return c == TargetClause::kAtLeast || c == TargetClause::kAbove;
}

// The runs no other run beats on both cost and the first figure, by cost.
std::vector<std::size_t> cost_front(const FleetSearch& search,
                                    const std::vector<FleetProbe>& probes) {
  const std::string& key = search.target.clauses.front().key;
  const bool higher = higher_is_better(search.target);
  // `a` at least as good as `b` on the figure.
  const auto as_good = [&](double a, double b) { return higher ? a >= b : a <= b; };
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const std::optional<double> fi = probes[i].summary.get(key);
    if (!fi) continue;
    bool beaten = false;
    for (std::size_t j = 0; j < probes.size() && !beaten; ++j) {
      const std::optional<double> fj = probes[j].summary.get(key);
      if (j == i || !fj) continue;
      const double ci = probes[i].usd_per_hour;
      const double cj = probes[j].usd_per_hour;
      beaten = cj <= ci && as_good(*fj, *fi) && (cj < ci || *fj != *fi);
    }
    if (!beaten) out.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return probes[a].usd_per_hour < probes[b].usd_per_hour;
  });
  return out;
}

// Whether the counts make a fleet: a replica at least, and in a
// disaggregated search one of each side.
bool forms_a_fleet(const FleetSearch& search, const FleetCounts& counts) {
  std::int64_t prefill = 0, decode = 0, both = 0;
  for (std::size_t c = 0; c < search.classes.size() && c < counts.size(); ++c) {
    const Role role = search.classes[c].role;
    (role == Role::kPrefill ? prefill : role == Role::kDecode ? decode : both) += counts[c];
  }
  return both > 0 || (prefill > 0 && decode > 0);
}

// Every fleet of the grid, in the classes' order of counts (the last class's
// count turning fastest).
std::vector<FleetCounts> fleet_grid(const FleetSearch& search) {
  const std::size_t k = search.classes.size();
  std::vector<std::vector<std::int64_t>> values;
  for (const FleetSearchClass& c : search.classes)
    values.push_back(c.counts());
  std::vector<FleetCounts> grid;
  std::vector<std::size_t> at(k, 0);
  for (bool done = std::any_of(values.begin(), values.end(),
                               [](const std::vector<std::int64_t>& v) { return v.empty(); });
       !done;) {
    FleetCounts counts(k);
    for (std::size_t c = 0; c < k; ++c)
      counts[c] = values[c][at[c]];
    if (forms_a_fleet(search, counts)) grid.push_back(counts);
    std::size_t c = k;
    while (c > 0 && at[c - 1] + 1 == values[c - 1].size()) {
      at[c - 1] = 0;
      --c;
    }
    if (c == 0) break;
    ++at[c - 1];
  }
  return grid;
}

}  // namespace

std::vector<std::int64_t> FleetSearchClass::counts() const {
  std::vector<std::int64_t> out;
  std::int64_t from = min;
  if (autoscale_min) {
    // A maximum below the class's minimum is no fleet: 0 (left out), then
    // from its minimum.
    if (min == 0) out.push_back(0);
    from = std::max<std::int64_t>({min, *autoscale_min, 1});
  }
  for (std::int64_t n = from; n <= max; ++n)
    out.push_back(n);
  return out;
}

void check_fleet_search(const FleetSearch& search) {
  if (search.classes.empty()) {
    throw InputError("", 0, "batching.fleet", "no class to size");
  }
  bool priced = false;
  std::int64_t most = 0;
  for (const FleetSearchClass& c : search.classes) {
    if (c.min < 0 || c.max < c.min) {
      throw InputError("", 0, "--min, --max",
                       "need 0 <= min <= max for class " + c.name + ", got " +
                           std::to_string(c.min) + " and " + std::to_string(c.max));
    }
    if (!(c.usd_per_replica_hour >= 0) || !std::isfinite(c.usd_per_replica_hour)) {
      throw InputError("", 0, "batching.fleet",
                       "class " + c.name + " costs " + shortest(c.usd_per_replica_hour) +
                           " $ a replica-hour; a price is 0 or more");
    }
    priced = priced || c.usd_per_replica_hour > 0;
    most += c.max;
  }
  if (!priced) {
    throw InputError("", 0, "batching.fleet",
                     "every class costs 0 $ an hour, so no fleet is cheaper than another: give "
                     "the classes' price_per_gpu_hour");
  }
  if (most == 0) throw InputError("", 0, "--max", "the grid holds no fleet with a replica");
  double grid = 1;
  for (const FleetSearchClass& c : search.classes)
    grid *= static_cast<double>(c.counts().size());
  if (grid > 100000) {
    throw InputError(
        "", 0, "--min, --max",
        "the grid holds " + shortest(grid) +
            " fleets, over the 100000 a search runs: narrow the counts or the classes");
  }
  if (search.target.clauses.empty()) throw InputError("", 0, "--target", "no target given");
  if (fleet_grid(search).empty()) {
    throw InputError("", 0, "--min, --max",
                     "the grid holds no fleet with a prefill and a decode replica");
  }
}

double fleet_usd_per_hour(const FleetSearch& search, const FleetCounts& counts) {
  double usd = 0;
  for (std::size_t c = 0; c < search.classes.size() && c < counts.size(); ++c) {
    const FleetSearchClass& cls = search.classes[c];
    const std::int64_t billed =
        cls.autoscale_min && counts[c] > 0 ? std::min(*cls.autoscale_min, counts[c]) : counts[c];
    usd += static_cast<double>(billed) * cls.usd_per_replica_hour;
  }
  return usd;
}

bool fleet_autoscales(const FleetSearch& search, const FleetCounts& counts) {
  for (std::size_t c = 0; c < search.classes.size() && c < counts.size(); ++c) {
    if (search.classes[c].autoscale_min && counts[c] > 0) return true;
  }
  return false;
}

std::string fleet_text(const FleetSearch& search, const FleetCounts& counts) {
  std::string out;
  for (std::size_t c = 0; c < search.classes.size() && c < counts.size(); ++c) {
    const FleetSearchClass& cls = search.classes[c];
    out += (out.empty() ? "" : " ") + cls.name + "=";
    if (cls.autoscale_min && counts[c] > 0) out += std::to_string(*cls.autoscale_min) + "..";
    out += std::to_string(counts[c]);
  }
  return out;
}

std::uint64_t fleet_search_max_runs(const FleetSearch& search) {
  return fleet_grid(search).size();
}

FleetSearchResult search_fleets(const FleetSearch& search,
                                const std::function<Summary(const FleetCounts&)>& evaluate,
                                const FleetProbeDone& probe_done) {
  check_fleet_search(search);
  FleetSearchResult result;
  result.grid = fleet_search_max_runs(search);

  // Runs a fleet. One with an autoscaled class bills what its run says.
  const auto run = [&](const FleetCounts& counts, double least_usd_per_hour) {
    FleetProbe p;
    p.counts = counts;
    p.least_usd_per_hour = least_usd_per_hour;
    p.usd_per_hour = p.least_usd_per_hour;
    p.summary = evaluate(counts);
    if (fleet_autoscales(search, counts)) {
      const std::optional<double> bill = p.summary.get("cost_usd");
      const std::optional<double> end = p.summary.get("end_s");
      if (bill && end && *end > 0) p.usd_per_hour = *bill / (*end / 3600);
    }
    p.met = search.target.met_by(p.summary);
    result.probes.push_back(p);
    if (probe_done) probe_done(result.probes.back());
  };

  // The grid in order of the least cost, then of replicas, then of counts.
  const std::vector<FleetCounts> grid = fleet_grid(search);
  std::vector<std::size_t> order(grid.size());
  std::vector<double> cost(grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) {
    order[i] = i;
    cost[i] = fleet_usd_per_hour(search, grid[i]);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (cost[x] != cost[y]) return cost[x] < cost[y];
    return total(grid[x]) < total(grid[y]);
  });
  result.method = search.exhaustive ? "exhaustive" : "cost order";
  // The cheapest so far: the least usd_per_hour among the runs that met the
  // target (ties: the first run, which has fewer replicas or costs less at
  // least).
  const auto better = [&](std::size_t i) {
    const FleetProbe& p = result.probes[i];
    return p.met &&
           (!result.cheapest || p.usd_per_hour < result.probes[*result.cheapest].usd_per_hour);
  };
  for (const std::size_t i : order) {
    // No fleet from here on can cost less than the cheapest found: every one
    // that could has been run.
    if (!search.exhaustive && result.cheapest &&
        cost[i] >= result.probes[*result.cheapest].usd_per_hour) {
      break;
    }
    run(grid[i], cost[i]);
    if (better(result.probes.size() - 1)) result.cheapest = result.probes.size() - 1;
  }
  if (!result.cheapest && !result.probes.empty()) {
    // What the closest run reached: the fewest clauses failed, then the least
    // miss (the first run among equals).
    std::size_t closest = 0;
    for (std::size_t i = 1; i < result.probes.size(); ++i) {
      if (search.target.miss(result.probes[i].summary) <
          search.target.miss(result.probes[closest].summary)) {
        closest = i;
      }
    }
    result.reason = "no fleet of the grid meets the target; the closest run, " +
                    fleet_text(search, result.probes[closest].counts) + ", reached " +
                    search.target.reached(result.probes[closest].summary);
  }
  result.front = cost_front(search, result.probes);
  return result;
}

FleetSearch fleet_search_of(const Settings& settings, std::int64_t min, std::int64_t max,
                            const Target& target) {
  if (!settings.fleet) {
    throw InputError("", 0, "--vary fleet",
                     "sizes a fleet's classes: list them in the settings file's batching.fleet "
                     "(each with a preset and its price_per_gpu_hour; see "
                     "settings/fleet_search_h100_l40s.json)");
  }
  FleetSearch search;
  search.target = target;
  const std::vector<ReplicaClass> classes = fleet_classes(settings);
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const ReplicaClass& c = classes[i];
    FleetSearchClass sized{c.name, static_cast<double>(c.gpus) * c.price_per_gpu_hour, min, max};
    if (c.autoscale) sized.autoscale_min = c.autoscale->min;
    sized.role = c.role;
    search.classes.push_back(sized);
  }
  check_fleet_search(search);
  return search;
}

Settings with_fleet_counts(const Settings& base, const FleetCounts& counts) {
  Settings settings = base;
  std::vector<FleetClassSettings> fleet;
  for (std::size_t c = 0; c < counts.size() && c < base.fleet->size(); ++c) {
    if (counts[c] == 0) continue;
    fleet.push_back((*base.fleet)[c]);
    fleet.back().resize(counts[c]);
  }
  settings.fleet = fleet;
  validate_settings(settings, "");
  return settings;
}

FleetSearchResult find_cheapest_fleet(const FleetSearch& search, const Settings& base,
                                      const std::string& mode, const Trace& trace,
                                      const FleetProbeDone& probe_done) {
  FleetSearchResult result = search_fleets(
      search,
      [&](const FleetCounts& counts) {
        return run_mode(with_fleet_counts(base, counts), trace, mode).summary;
      },
      probe_done);
  if (!result.cheapest) {
    FleetCounts largest;
    for (const FleetSearchClass& c : search.classes)
      largest.push_back(c.max);
    const std::string why =
        idle_bound_reason(with_fleet_counts(base, largest), trace, mode, search.target);
    if (!why.empty()) result.reason += "; " + why;
  }
  return result;
}

nlohmann::ordered_json fleet_search_to_json(const FleetSearch& search,
                                            const FleetSearchResult& result) {
  // A class's count; an autoscaled class's bounds.
  const auto counts_json = [&](const FleetCounts& counts) {
    nlohmann::ordered_json out;
    for (std::size_t c = 0; c < search.classes.size(); ++c) {
      const FleetSearchClass& cls = search.classes[c];
      if (cls.autoscale_min && counts[c] > 0) {
        out[cls.name] = {{"min", std::min(*cls.autoscale_min, counts[c])}, {"max", counts[c]}};
      } else {
        out[cls.name] = counts[c];
      }
    }
    return out;
  };
  std::vector<std::string> keys = search.target.keys();
  if (std::find(keys.begin(), keys.end(), "usd_per_million_tokens") == keys.end())
    keys.push_back("usd_per_million_tokens");
  const auto figures = [&](nlohmann::ordered_json& out, const FleetProbe& p) {
    for (const std::string& key : keys) {
      if (!holds(p.summary, key)) continue;  // a fixed-count run without a bill
      const std::optional<double> value = figure_value(p.summary, key);
      out[key] = json_number(value);
    }
  };
  nlohmann::ordered_json out;
  if (result.cheapest) {
    const FleetProbe& p = result.probes[*result.cheapest];
    out["fleet"] = counts_json(p.counts);
    out["usd_per_hour"] = p.usd_per_hour;
    figures(out, p);
  } else {
    out["fleet"] = nullptr;
    out["reason"] = result.reason;
  }
  out["method"] = result.method;
  out["grid"] = result.grid;
  out["runs"] = result.probes.size();
  out["front"] = nlohmann::ordered_json::array();
  for (const std::size_t i : result.front)
    out["front"].push_back(i + 1);
  out["steps"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < result.probes.size(); ++i) {
    const FleetProbe& p = result.probes[i];
    nlohmann::ordered_json step;
    step["run"] = i + 1;
    step["fleet"] = counts_json(p.counts);
    step["usd_per_hour"] = p.usd_per_hour;
    if (fleet_autoscales(search, p.counts)) step["least_usd_per_hour"] = p.least_usd_per_hour;
    step["met"] = p.met;
    figures(step, p);
    out["steps"].push_back(step);
  }
  return out;
}

std::string fleet_search_csv(const FleetSearch& search, const std::vector<std::string>& modes,
                             const std::vector<FleetSearchResult>& results,
                             const std::vector<std::string>& figure_keys) {
  std::string out = "mode,run";
  for (const FleetSearchClass& c : search.classes)
    out += "," + csv_field(c.name);
  out += ",usd_per_hour,met,front";
  for (const std::string& key : figure_keys)
    out += "," + key;
  out += '\n';
  for (std::size_t m = 0; m < modes.size() && m < results.size(); ++m) {
    const FleetSearchResult& r = results[m];
    for (std::size_t i = 0; i < r.probes.size(); ++i) {
      const FleetProbe& p = r.probes[i];
      out += modes[m] + "," + std::to_string(i + 1);
      for (const std::int64_t n : p.counts)
        out += "," + std::to_string(n);
      const bool on_front = std::find(r.front.begin(), r.front.end(), i) != r.front.end();
      out += "," + shortest(p.usd_per_hour) + (p.met ? ",true" : ",false") +
             (on_front ? ",true" : ",false");
      append_figure_fields(out, figure_keys, p.summary);
      out += '\n';
    }
  }
  return out;
}

}  // namespace infersim
