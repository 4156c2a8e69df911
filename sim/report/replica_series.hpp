// A batching server's replicas one by one over time (replicas.csv): for each
// slice and replica, the requests running and waiting on it and its KV
// blocks in use, each time-weighted over the slice (0 while the replica is
// idle). The time series sums them over the replicas; this keeps them apart,
// so the imbalance a router leaves can be seen.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sim_time.hpp"
#include "model/request_observer.hpp"
#include "model/server_model.hpp"

namespace infersim {

struct ReplicaSeries {
  Duration slice;
  std::uint32_t replicas = 0;
  std::vector<std::uint32_t> kv_blocks;  // a replica's K
  // Time-weighted over each slice, slice-major: [slice * replicas + replica].
  std::vector<double> running;
  std::vector<double> waiting;
  std::vector<double> kv_used;
  // A fleet's (BATCHING.md section 11): each replica's class by index, and
  // whether the mode ever provisioned it (1) or left its slot absent (0);
  // empty without a fleet (every replica serves the whole run).
  std::vector<std::string> unit_class;
  std::vector<char> provisioned;
  // Why there are no series although the server has replicas ("" when kept).
  std::string omitted;
  // "replica 3", or a fleet's "h100 #3" (the index is the replica's, as
  // requests.csv and replicas.csv number it).
  std::string label(std::uint32_t replica) const;
  bool ever_provisioned(std::uint32_t replica) const {
    return replica >= provisioned.size() || provisioned[replica] != 0;
  }
  std::size_t slices() const { return replicas == 0 ? 0 : running.size() / replicas; }
  bool empty() const { return running.empty(); }
};

class ReplicaSeriesCollector : public ServerObserver {
 public:
  // At most this many slice x replica cells are kept (three doubles each): a
  // run beyond it keeps none and says so.
  static constexpr std::size_t kMaxCells = std::size_t{1} << 22;

  ReplicaSeriesCollector(Duration slice, std::uint32_t replicas);
  void on_step(const StepRecord& step) override;
  unsigned reads() const override { return kSteps; }
  // The series up to `end` (its last slice cut there).
  ReplicaSeries finish(SimTime end);

 private:
  void hold(std::size_t cell_slice, std::uint32_t replica, double seconds, const StepRecord& step);

  ReplicaSeries series_;
  bool over_ = false;
};

// replicas.csv: `t_s,replica,running_mean,waiting_mean,kv_use_pct`, and for a
// fleet `replica_class`, a row a slice and replica, slice-major; t_s is the
// slice's start.
std::string replica_series_csv(const ReplicaSeries& series);

}  // namespace infersim
