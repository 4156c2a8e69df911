#include "studies/frontier.hpp"

#include <filesystem>

#include "core/number_format.hpp"
#include "report/csv_field.hpp"
#include "report/figure_text.hpp"

namespace infersim {

namespace {

constexpr const char* kCap = "max-concurrency";

std::string field(std::optional<double> value) {
  return value ? shortest(*value) : "";
}

}  // namespace

bool sweep_has_frontier(const Sweep& sweep) {
  for (const SweepAxis& axis : sweep.axes) {
    if (axis.name == kCap) return true;
  }
  return false;
}

std::vector<FrontierPoint> frontier_points(const Sweep& sweep,
                                           const std::vector<SweepPointResult>& results) {
  std::vector<FrontierPoint> points;
  for (const SweepPointResult& result : results) {
    const SweepModeSummary* recorded = nullptr;
    for (const SweepModeSummary& mode : result.modes) {
      if (mode.mode == "recorded") recorded = &mode;
    }
    if (recorded == nullptr) continue;
    FrontierPoint p;
    const std::vector<std::size_t> at = sweep.coordinates(result.index);
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      const SweepAxis& axis = sweep.axes[a];
      if (axis.name == kCap) {
        p.max_concurrency = axis.values[at[a]].get<double>();
      } else {
        // A settings file by its name: the curve's label, not its folder.
        std::string value = sweep_value_text(axis.values[at[a]]);
        if (axis.name == "settings") value = std::filesystem::path(value).stem().string();
        p.configuration += (p.configuration.empty() ? "" : " ") + axis.name + "=" + value;
      }
    }
    const Summary& s = recorded->summary;
    p.per_gpu_tps = figure_value(s, "output_throughput_per_gpu_tps");
    p.per_user_tps = figure_value(s, "output_throughput_per_user_tps");
    p.ttft_mean_s = figure_value(s, "ttft_mean_s");
    p.ttft_p99_s = figure_value(s, "ttft_p99_s");
    p.tpot_mean_s = figure_value(s, "tpot_mean_s");
    p.output_tps = figure_value(s, "output_throughput_tps");
    p.request_rps = figure_value(s, "request_throughput_rps");
    p.mean_in_flight = figure_value(s, "mean_in_flight");
    points.push_back(std::move(p));
  }
  mark_pareto(points);
  return points;
}

void mark_pareto(std::vector<FrontierPoint>& points) {
  for (FrontierPoint& p : points) {
    p.pareto = p.per_gpu_tps && p.per_user_tps;
    if (!p.pareto) continue;
    for (const FrontierPoint& q : points) {
      if (!q.per_gpu_tps || !q.per_user_tps) continue;
      const bool as_good = *q.per_gpu_tps >= *p.per_gpu_tps && *q.per_user_tps >= *p.per_user_tps;
      const bool better = *q.per_gpu_tps > *p.per_gpu_tps || *q.per_user_tps > *p.per_user_tps;
      if (as_good && better) {
        p.pareto = false;
        break;
      }
    }
  }
}

std::string frontier_csv(const std::vector<FrontierPoint>& points) {
  std::string out =
      "configuration,max_concurrency,output_throughput_per_gpu_tps,"
      "output_throughput_per_user_tps,ttft_mean_s,ttft_p99_s,tpot_mean_s,output_throughput_tps,"
      "request_throughput_rps,mean_in_flight,pareto\n";
  for (const FrontierPoint& p : points) {
    out += csv_field(p.configuration) + "," + shortest(p.max_concurrency) + "," +
           field(p.per_gpu_tps) + "," + field(p.per_user_tps) + "," + field(p.ttft_mean_s) + "," +
           field(p.ttft_p99_s) + "," + field(p.tpot_mean_s) + "," + field(p.output_tps) + "," +
           field(p.request_rps) + "," + field(p.mean_in_flight) + "," +
           (p.pareto ? "true" : "false") + "\n";
  }
  return out;
}

}  // namespace infersim
