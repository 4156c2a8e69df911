// The cheapest-fleet search (studies/fleet_search.hpp) on figures given by a
// function of the counts: the answer is the brute-force cheapest whatever
// shape the figure has, the runs before it are exactly the cheaper fleets,
// ties go to fewer replicas, and the front and the files say what was run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "studies/capacity.hpp"
#include "studies/fleet_search.hpp"
#include "studies/sweep_plots.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;

// Two classes: "big" at 3 $ a replica-hour, "small" at 1, counts 0 to 6.
FleetSearch two_classes(const std::string& target = "ttft_p99_s<=2") {
  FleetSearch search;
  search.classes = {{"big", 3.0, 0, 6}, {"small", 1.0, 0, 6}};
  search.target = parse_target(target, {"ttft_p99_s", "success_rate"});
  return search;
}

Summary figure(double ttft_p99_s) {
  Summary s;
  s.add("ttft_p99_s", ttft_p99_s);
  return s;
}

// What the real runs show (tests/scenario/fleet_search_scenario_test.cpp):
// the big replicas carry the tail alone, and every small replica added to them
// raises it, so meeting the target is not monotone in the small count.
double mixed_fleet_ttft(const FleetCounts& n) {
  if (n[0] == 0) return 50.0 / static_cast<double>(n[1]);
  return 7.0 / static_cast<double>(n[0]) + 0.4 * static_cast<double>(n[1]);
}

// The cheapest fleet that meets the target, by running every one.
std::optional<FleetCounts> brute_force(const FleetSearch& search,
                                       const std::function<double(const FleetCounts&)>& ttft) {
  std::optional<FleetCounts> best;
  double best_cost = std::numeric_limits<double>::infinity();
  std::int64_t best_replicas = 0;
  for (std::int64_t a = search.classes[0].min; a <= search.classes[0].max; ++a) {
    for (std::int64_t b = search.classes[1].min; b <= search.classes[1].max; ++b) {
      if (a + b == 0) continue;
      const FleetCounts n = {a, b};
      if (!search.target.met_by(figure(ttft(n)))) continue;
      const double cost = fleet_usd_per_hour(search, n);
      if (cost < best_cost || (cost == best_cost && a + b < best_replicas)) {
        best = n;
        best_cost = cost;
        best_replicas = a + b;
      }
    }
  }
  return best;
}

TEST(FleetSearch, FindsTheBruteForceCheapestWhenMoreReplicasHurt) {
  const FleetSearch search = two_classes();
  int calls = 0;
  const FleetSearchResult r = search_fleets(search, [&](const FleetCounts& n) {
    ++calls;
    EXPECT_GT(n[0] + n[1], 0) << "a fleet with no replica is never run";
    return figure(mixed_fleet_ttft(n));
  });
  const auto expected = brute_force(search, mixed_fleet_ttft);
  ASSERT_TRUE(expected.has_value());
  ASSERT_TRUE(r.cheapest.has_value());
  EXPECT_EQ(r.probes[*r.cheapest].counts, *expected);
  // 7/4 = 1.75 s at 12 $; 7/3 = 2.33 s at 9 $ fails, and so does (4, 1) at 2.15 s.
  EXPECT_EQ(*expected, (FleetCounts{4, 0}));
  EXPECT_EQ(r.method, "cost order");
  EXPECT_EQ(r.grid, 48u);
  EXPECT_EQ(calls, static_cast<int>(r.probes.size()));
  // The runs are the fleets in order of cost up to the answer, every one
  // before it failed, and every fleet of the grid cheaper than it was run.
  const double answer_cost = r.probes[*r.cheapest].usd_per_hour;
  for (std::size_t i = 0; i + 1 < r.probes.size(); ++i) {
    EXPECT_FALSE(r.probes[i].met);
    EXPECT_LE(r.probes[i].usd_per_hour, r.probes[i + 1].usd_per_hour);
  }
  EXPECT_EQ(*r.cheapest, r.probes.size() - 1);
  std::size_t cheaper = 0;
  for (std::int64_t a = 0; a <= 6; ++a) {
    for (std::int64_t b = 0; b <= 6; ++b) {
      if (a + b > 0 && 3.0 * static_cast<double>(a) + static_cast<double>(b) < answer_cost)
        ++cheaper;
    }
  }
  EXPECT_GE(r.probes.size(), cheaper + 1);
}

TEST(FleetSearch, ExhaustiveRunsTheGridAndAgrees) {
  FleetSearch search = two_classes();
  search.exhaustive = true;
  const FleetSearchResult r =
      search_fleets(search, [&](const FleetCounts& n) { return figure(mixed_fleet_ttft(n)); });
  EXPECT_EQ(r.method, "exhaustive");
  EXPECT_EQ(r.probes.size(), 48u);
  ASSERT_TRUE(r.cheapest.has_value());
  EXPECT_EQ(r.probes[*r.cheapest].counts, (FleetCounts{4, 0}));
}

TEST(FleetSearch, RandomFiguresAgreeWithBruteForce) {
  // Figures with no shape at all: the search still answers the cheapest.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    FleetSearch search = two_classes();
    search.classes[0].min = seed % 3;
    search.classes[1].max = 3 + seed % 5;
    const auto ttft = [seed](const FleetCounts& n) {
      const auto h = (static_cast<std::uint64_t>(n[0]) * 2654435761u +
                      static_cast<std::uint64_t>(n[1]) * 40503u + seed * 97u) %
                     1000u;
      return static_cast<double>(h) / 100.0;  // 0 to 10 s
    };
    const FleetSearchResult r =
        search_fleets(search, [&](const FleetCounts& n) { return figure(ttft(n)); });
    const auto expected = brute_force(search, ttft);
    ASSERT_EQ(r.cheapest.has_value(), expected.has_value());
    if (expected) {
      EXPECT_EQ(r.probes[*r.cheapest].counts, *expected);
    }
  }
}

TEST(FleetSearch, TiesInCostGoToFewerReplicas) {
  // Every fleet of 3 $ or more meets: (1, 0) and (0, 3) cost the same.
  const FleetSearch search = two_classes();
  const FleetSearchResult r = search_fleets(search, [&](const FleetCounts& n) {
    return figure(fleet_usd_per_hour(search, n) >= 3 ? 1.0 : 9.0);
  });
  ASSERT_TRUE(r.cheapest.has_value());
  EXPECT_EQ(r.probes[*r.cheapest].counts, (FleetCounts{1, 0}));
  EXPECT_EQ(r.probes.size(), 3u);  // (0, 1), (0, 2), then (1, 0)
}

TEST(FleetSearch, SaysWhenNoFleetMeetsTheTarget) {
  const FleetSearch search = two_classes();
  const FleetSearchResult r = search_fleets(search, [](const FleetCounts&) { return figure(5.0); });
  EXPECT_FALSE(r.cheapest.has_value());
  EXPECT_EQ(r.probes.size(), 48u);
  EXPECT_THAT(r.reason, HasSubstr("no fleet of the grid meets the target"));
}

// Where no fleet meets the target, the reason says what the closest reached:
// the largest fleet's tail here, the one a planner would buy next.
TEST(FleetSearch, SaysWhatTheClosestFleetReached) {
  const FleetSearch search = two_classes("ttft_p99_s<=0.5");
  const FleetSearchResult r = search_fleets(
      search, [&](const FleetCounts& n) { return figure(mixed_fleet_ttft(n) + 1.0); });
  EXPECT_FALSE(r.cheapest.has_value());
  // 7/6 + 1 at six big and no small replica: the least of the grid.
  EXPECT_THAT(r.reason, HasSubstr("; the closest run, big=6 small=0, reached ttft_p99_s=2.16667"));
}

TEST(FleetSearch, OneClassAlone) {
  FleetSearch search;
  search.classes = {{"only", 2.0, 1, 10}};
  search.target = parse_target("success_rate>=0.99", {"success_rate"});
  const FleetSearchResult r = search_fleets(search, [](const FleetCounts& n) {
    Summary s;
    s.add("success_rate", n[0] >= 7 ? 1.0 : 0.5);
    return s;
  });
  ASSERT_TRUE(r.cheapest.has_value());
  EXPECT_EQ(r.probes[*r.cheapest].counts, (FleetCounts{7}));
  EXPECT_DOUBLE_EQ(r.probes[*r.cheapest].usd_per_hour, 14.0);
}

TEST(FleetSearch, TheFrontHoldsTheRunsNoOtherBeatsOnBoth) {
  FleetSearch search;
  search.classes = {{"only", 1.0, 1, 5}};
  search.target = parse_target("ttft_p99_s<=1", {"ttft_p99_s"});
  search.exhaustive = true;
  // 1: 9 s, 2: 4 s, 3: 5 s (worse and dearer than 2), 4: 1 s, 5: 1 s (as good, dearer).
  const std::vector<double> ttft = {9, 4, 5, 1, 1};
  const FleetSearchResult r = search_fleets(search, [&](const FleetCounts& n) {
    return figure(ttft[static_cast<std::size_t>(n[0] - 1)]);
  });
  std::vector<std::int64_t> front;
  for (const std::size_t i : r.front)
    front.push_back(r.probes[i].counts[0]);
  EXPECT_EQ(front, (std::vector<std::int64_t>{1, 2, 4}));
  // A target asking for more of a figure: higher is better.
  search.target = parse_target("success_rate>=0.5", {"success_rate"});
  const std::vector<double> rate = {0.2, 0.6, 0.5, 0.9, 0.9};
  const FleetSearchResult up = search_fleets(search, [&](const FleetCounts& n) {
    Summary s;
    s.add("success_rate", rate[static_cast<std::size_t>(n[0] - 1)]);
    return s;
  });
  front.clear();
  for (const std::size_t i : up.front)
    front.push_back(up.probes[i].counts[0]);
  EXPECT_EQ(front, (std::vector<std::int64_t>{1, 2, 4}));
}

TEST(FleetSearch, WritesEveryRunToItsFiles) {
  const FleetSearch search = two_classes();
  const FleetSearchResult r =
      search_fleets(search, [&](const FleetCounts& n) { return figure(mixed_fleet_ttft(n)); });
  const auto json = fleet_search_to_json(search, r);
  EXPECT_EQ(json["fleet"]["big"], 4);
  EXPECT_EQ(json["fleet"]["small"], 0);
  EXPECT_DOUBLE_EQ(json["usd_per_hour"].get<double>(), 12.0);
  EXPECT_EQ(json["runs"], r.probes.size());
  EXPECT_EQ(json["steps"].size(), r.probes.size());
  EXPECT_EQ(json["method"], "cost order");
  const std::string csv = fleet_search_csv(search, {"recorded"}, {r}, {"ttft_p99_s"});
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "mode,run,big,small,usd_per_hour,met,front,ttft_p99_s");
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')),
            r.probes.size() + 1);
  EXPECT_THAT(csv, HasSubstr("recorded,1,0,1,1,false,true,50"));
  EXPECT_EQ(fleet_text(search, {4, 0}), "big=4 small=0");
}

TEST(FleetSearch, ThePictureDrawsEachModesRunsFrontAndAnswer) {
  const PlotScript p = fleet_cost_plot_script(
      {{"recorded", 12.0}, {"synthetic", std::nullopt}}, {"ttft_p99_s", "<=", 2},
      "mode,run,big,small,usd_per_hour,met,front,ttft_p99_s\n"
      "recorded,1,0,1,1,false,true,50\nrecorded,2,4,0,12,true,true,1.75\n"
      "synthetic,1,0,1,1,false,true,40\n");
  EXPECT_EQ(p.name, "fleet_cost");
  EXPECT_THAT(p.script, HasSubstr("$recorded_front using 1:2"));
  EXPECT_THAT(p.script, HasSubstr("$synthetic_front using 1:2"));
  EXPECT_THAT(p.script, HasSubstr("recorded cheapest: $12 an hour"));
  EXPECT_THAT(p.script, Not(HasSubstr("synthetic cheapest")));
  EXPECT_THAT(p.script, HasSubstr("target: ttft_p99_s<=2"));
}

TEST(FleetSearch, RefusesWhatCannotBeSearched) {
  FleetSearch free = two_classes();
  free.classes[0].usd_per_replica_hour = 0;
  free.classes[1].usd_per_replica_hour = 0;
  EXPECT_THROW(
      {
        try {
          check_fleet_search(free);
        } catch (const InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("price_per_gpu_hour"));
          throw;
        }
      },
      InputError);
  FleetSearch inverted = two_classes();
  inverted.classes[1].min = 5;
  inverted.classes[1].max = 2;
  EXPECT_THROW(check_fleet_search(inverted), InputError);
  FleetSearch huge = two_classes();
  huge.classes[0].max = 4000;
  huge.classes[1].max = 4000;
  EXPECT_THROW(
      {
        try {
          check_fleet_search(huge);
        } catch (const InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("100000"));
          throw;
        }
      },
      InputError);
  FleetSearch empty = two_classes();
  empty.classes[0].max = 0;
  empty.classes[1].max = 0;
  EXPECT_THROW(check_fleet_search(empty), InputError);
}

// An autoscaled class ("small", 1 $ a replica-hour, autoscaled from 1: its
// count is its maximum) bills what its run says, at least its minimum. The
// search runs the fleets by that least and stops when it reaches the
// cheapest found: the answer is the brute-force cheapest by measured cost,
// and every fleet that could have cost less was run.
TEST(FleetSearch, BoundsAnAutoscaledClassByItsMinimum) {
  FleetSearch search = two_classes();
  search.classes[1].autoscale_min = 1;
  // A fleet's bill an hour over a one-hour run: the small class grows to
  // its maximum less one, and the figure falls with the big count and the
  // small class's maximum (but not as the bill does).
  const auto bill = [](const FleetCounts& n) {
    return 3.0 * static_cast<double>(n[0]) +
           (n[1] == 0 ? 0.0 : std::max(1.0, static_cast<double>(n[1]) - 1));
  };
  const auto ttft = [](const FleetCounts& n) {
    return n[0] > 0 ? 7.0 / static_cast<double>(n[0]) + 0.1 * static_cast<double>(n[1])
                    : 12.0 / static_cast<double>(n[1]);
  };
  const auto evaluate = [&](const FleetCounts& n) {
    Summary s = figure(ttft(n));
    s.add("cost_usd", bill(n));
    s.add("end_s", 3600.0);
    return s;
  };
  const FleetSearchResult r = search_fleets(search, evaluate);
  // By brute force over the grid (the small class from 1 up, or left out).
  std::optional<double> best;
  for (std::int64_t a = 0; a <= 6; ++a) {
    for (std::int64_t b = 0; b <= 6; ++b) {
      if (a + b == 0 || !search.target.met_by(figure(ttft({a, b})))) continue;
      if (!best || bill({a, b}) < *best) best = bill({a, b});
    }
  }
  ASSERT_TRUE(best && r.cheapest);
  EXPECT_DOUBLE_EQ(r.probes[*r.cheapest].usd_per_hour, *best);
  EXPECT_TRUE(fleet_autoscales(search, r.probes[*r.cheapest].counts));
  for (std::int64_t a = 0; a <= 6; ++a) {
    for (std::int64_t b = 0; b <= 6; ++b) {
      if (a + b == 0 || fleet_usd_per_hour(search, {a, b}) >= *best) continue;
      const bool run = std::any_of(r.probes.begin(), r.probes.end(), [&](const FleetProbe& p) {
        return p.counts == FleetCounts{a, b};
      });
      EXPECT_TRUE(run) << "big=" << a << " small=" << b << " could cost less than the answer";
    }
  }
  for (const FleetProbe& p : r.probes)
    EXPECT_LE(p.least_usd_per_hour, p.usd_per_hour);
  EXPECT_LT(r.probes.size(), fleet_search_max_runs(search));
  EXPECT_EQ(fleet_text(search, {2, 4}), "big=2 small=1..4");
  EXPECT_EQ(fleet_text(search, {2, 0}), "big=2 small=0");
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

// A disaggregated search (BATCHING.md section 12): every fleet it runs has a
// prefill and a decode replica, and the answer is the cheapest split that
// meets the target, here one that needs prefill and decode in a 1:3 ratio.
TEST(FleetSearch, ADisaggregatedSearchRunsOnlyFleetsWithBothSides) {
  FleetSearch search;
  search.classes = {{"prefill", 3.0, 0, 4}, {"decode", 3.0, 0, 8}};
  search.classes[0].role = Role::kPrefill;
  search.classes[1].role = Role::kDecode;
  search.target = parse_target("ttft_p99_s<=2", {"ttft_p99_s"});
  EXPECT_EQ(fleet_search_max_runs(search), 4u * 8u);
  std::vector<FleetCounts> ran;
  const FleetSearchResult r = search_fleets(
      search,
      [&](const FleetCounts& n) {
        ran.push_back(n);
        EXPECT_GT(n[0], 0);
        EXPECT_GT(n[1], 0);
        return figure(n[1] >= 3 * n[0] ? 1.0 : 5.0);
      },
      nullptr);
  ASSERT_TRUE(r.cheapest.has_value());
  EXPECT_EQ(r.probes[*r.cheapest].counts, (FleetCounts{1, 3}));
  // Cheaper fleets were run first, none of them with a side missing.
  EXPECT_EQ(ran.back(), (FleetCounts{1, 3}));
  EXPECT_EQ(ran.front(), (FleetCounts{1, 1}));

  // A grid that cannot hold both sides is refused.
  search.classes[1].max = 0;
  EXPECT_THROW(check_fleet_search(search), InputError);
}

}  // namespace
}  // namespace infersim
