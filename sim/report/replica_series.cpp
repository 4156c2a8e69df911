#include "report/replica_series.hpp"

#include <algorithm>

#include "core/number_format.hpp"

namespace infersim {

ReplicaSeriesCollector::ReplicaSeriesCollector(Duration slice, std::uint32_t replicas) {
  series_.slice = slice;
  series_.replicas = replicas;
  series_.kv_blocks.assign(replicas, 0);
}

void ReplicaSeriesCollector::hold(std::size_t slice, std::uint32_t replica, double seconds,
                                  const StepRecord& step) {
  const std::size_t cell = slice * series_.replicas + replica;
  if (cell >= series_.running.size()) {
    if ((slice + 1) * series_.replicas > kMaxCells) {
      over_ = true;
      return;
    }
    const std::size_t size = (slice + 1) * series_.replicas;
    series_.running.resize(size, 0);
    series_.waiting.resize(size, 0);
    series_.kv_used.resize(size, 0);
  }
  series_.running[cell] += seconds * step.running;
  series_.waiting[cell] += seconds * step.waiting;
  series_.kv_used[cell] += seconds * step.kv_blocks_used;
}

void ReplicaSeriesCollector::on_step(const StepRecord& step) {
  const std::int64_t slice_ns = series_.slice.count_ns();
  if (over_ || slice_ns <= 0 || step.replica >= series_.replicas) return;
  series_.kv_blocks[step.replica] = step.kv_blocks;
  // The step's state held over [start, end), cut at the slices' edges.
  std::int64_t from = step.start.count_ns();
  const std::int64_t to = step.end.count_ns();
  while (from < to && !over_) {
    const auto slice = static_cast<std::size_t>(from / slice_ns);
    const std::int64_t edge =
        std::min<std::int64_t>(to, slice_start_ns(static_cast<std::int64_t>(slice) + 1, slice_ns));
    hold(slice, step.replica, static_cast<double>(edge - from) * 1e-9, step);
    from = edge;
  }
}

ReplicaSeries ReplicaSeriesCollector::finish(SimTime end) {
  ReplicaSeries out = std::move(series_);
  if (over_) {
    out.running.clear();
    out.waiting.clear();
    out.kv_used.clear();
    out.omitted = std::to_string(out.replicas) + " replicas over this many slices exceed " +
                  std::to_string(kMaxCells) + " cells: replicas.csv is left out";
    return out;
  }
  const std::int64_t slice_ns = out.slice.count_ns();
  if (slice_ns <= 0 || out.replicas == 0) return out;
  // Every slice to the run's end, the idle ones too.
  const auto slices = static_cast<std::size_t>(
      (std::max<std::int64_t>(end.count_ns(), 1) + slice_ns - 1) / slice_ns);
  if (slices * out.replicas > kMaxCells) {
    out.running.clear();
    out.waiting.clear();
    out.kv_used.clear();
    out.omitted = std::to_string(out.replicas) + " replicas over " + std::to_string(slices) +
                  " slices exceed " + std::to_string(kMaxCells) +
                  " cells: replicas.csv is left out";
    return out;
  }
  const std::size_t cells = std::max(out.running.size(), slices * out.replicas);
  out.running.resize(cells, 0);
  out.waiting.resize(cells, 0);
  out.kv_used.resize(cells, 0);
  // Time-weighted means: the sums over each slice's length (the last cut at
  // the end).
  for (std::size_t s = 0; s < cells / out.replicas; ++s) {
    const std::int64_t start = static_cast<std::int64_t>(s) * slice_ns;
    const std::int64_t stop = std::max(start + 1, std::min(start + slice_ns, end.count_ns()));
    const double length = static_cast<double>(stop - start) * 1e-9;
    for (std::uint32_t r = 0; r < out.replicas; ++r) {
      const std::size_t cell = s * out.replicas + r;
      out.running[cell] /= length;
      out.waiting[cell] /= length;
      out.kv_used[cell] /= length;
    }
  }
  return out;
}

std::string ReplicaSeries::label(std::uint32_t replica) const {
  if (replica < unit_class.size()) return unit_class[replica] + " #" + std::to_string(replica);
  return "replica " + std::to_string(replica);
}

std::string replica_series_csv(const ReplicaSeries& series) {
  const bool classes = series.unit_class.size() == series.replicas && series.replicas > 0;
  std::string out = std::string("t_s,replica,running_mean,waiting_mean,kv_use_pct") +
                    (classes ? ",replica_class\n" : "\n");
  const double slice_s = series.slice.seconds();
  for (std::size_t s = 0; s < series.slices(); ++s) {
    for (std::uint32_t r = 0; r < series.replicas; ++r) {
      const std::size_t cell = s * series.replicas + r;
      append_shortest(out, static_cast<double>(s) * slice_s);
      out += ',' + std::to_string(r) + ',';
      append_shortest(out, series.running[cell]);
      out += ',';
      append_shortest(out, series.waiting[cell]);
      out += ',';
      const std::uint32_t blocks = series.kv_blocks[r];
      append_shortest(out, blocks == 0 ? 0.0 : 100 * series.kv_used[cell] / blocks);
      if (classes) out += ',' + series.unit_class[r];
      out += '\n';
    }
  }
  return out;
}

}  // namespace infersim
