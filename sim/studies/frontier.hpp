// The throughput-interactivity frontier, as GPU vendors and leaderboards
// publish it: a closed loop (MODEL.md section 4b) swept over its cap, each
// point's output tokens a second per GPU against a user's tokens a second,
// one curve a configuration (the sweep's other knobs' values), the points
// no other beats on both marked.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "studies/sweep.hpp"

namespace infersim {

struct FrontierPoint {
  std::string configuration;  // "router=prefix replicas=2"; "" with max-concurrency alone
  double max_concurrency = 0;
  std::optional<double> per_gpu_tps;   // output_throughput_per_gpu_tps
  std::optional<double> per_user_tps;  // output_throughput_per_user_tps
  std::optional<double> ttft_mean_s, ttft_p99_s, tpot_mean_s;
  std::optional<double> output_tps, request_rps, mean_in_flight;
  bool pareto = false;  // no other point of the sweep has both rates at least as high, one higher
};

// Whether the sweep draws a frontier: it varies max-concurrency.
bool sweep_has_frontier(const Sweep& sweep);
// Each point's recorded mode, in the sweep's order, the Pareto points marked.
std::vector<FrontierPoint> frontier_points(const Sweep& sweep,
                                           const std::vector<SweepPointResult>& results);
// Marks the points no other beats on both rates (a point missing either is
// never marked).
void mark_pareto(std::vector<FrontierPoint>& points);
// frontier.csv: a row a point.
std::string frontier_csv(const std::vector<FrontierPoint>& points);

}  // namespace infersim
