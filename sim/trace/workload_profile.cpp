#include "trace/workload_profile.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/json_number.hpp"
#include "core/percentiles.hpp"

namespace infersim {
namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

double seconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

struct WindowCounts {
  std::uint64_t peak = 0;
  std::optional<double> index_of_dispersion;
};

// Counts the requests of each window [k*w, (k+1)*w), k = 0 .. last/w, in one
// pass over the sorted offsets. With counts c_k over W windows and n requests,
// variance / mean = (sum c_k^2 / W - (n/W)^2) / (n/W) = sum c_k^2 / n - n / W,
// so only the non-empty windows need visiting.
WindowCounts count_windows(const LargeVector<TraceRecord>& records, std::int64_t window_ns) {
  WindowCounts out;
  if (records.empty()) return out;
  std::uint64_t sum_of_squares = 0;
  std::int64_t window = records.front().offset_ns / window_ns;
  std::uint64_t count = 0;
  for (const TraceRecord& r : records) {
    const std::int64_t k = r.offset_ns / window_ns;
    if (k != window) {
      sum_of_squares += count * count;
      out.peak = std::max(out.peak, count);
      window = k;
      count = 0;
    }
    ++count;
  }
  sum_of_squares += count * count;
  out.peak = std::max(out.peak, count);
  const auto windows = static_cast<double>(records.back().offset_ns / window_ns + 1);
  // One window has no variance to speak of: the figure would be 0 whatever the
  // arrivals.
  if (windows >= 2) {
    const auto n = static_cast<double>(records.size());
    out.index_of_dispersion = std::max(0.0, static_cast<double>(sum_of_squares) / n - n / windows);
  }
  return out;
}

template <typename Field>
TokenStats token_stats(const LargeVector<TraceRecord>& records, Field field) {
  TokenStats stats;
  if (records.empty()) return stats;
  std::vector<double> values;
  values.reserve(records.size());
  std::uint64_t sum = 0;
  for (const TraceRecord& r : records) {
    const std::uint64_t v = field(r);
    sum += v;
    stats.max = std::max(stats.max, v);
    values.push_back(static_cast<double>(v));
  }
  stats.mean = static_cast<double>(sum) / static_cast<double>(records.size());
  stats.p50 = *percentile(values, 0.50);
  stats.p90 = *percentile(values, 0.90);
  stats.p99 = *percentile(values, 0.99);
  return stats;
}

// A block is a hit when an earlier block of the trace had its id. Mooncake
// numbers blocks densely from 0, so a bit a possible id walks the trace in
// order in linear time; sparse ids fall back to sorting a copy, where the hits
// are every occurrence but each id's first (blocks_seen - distinct_blocks).
std::optional<BlockReuse> block_reuse(const Trace& trace) {
  std::uint64_t seen = 0;
  std::uint32_t largest = 0;
  for (std::size_t i = 0; i < trace.records.size(); ++i) {
    const auto ids = trace.hash_ids_of(i);
    for (const std::uint32_t id : ids)
      largest = std::max(largest, id);
    seen += ids.size();
  }
  if (seen == 0) return std::nullopt;
  BlockReuse out;
  out.blocks_seen = seen;
  constexpr std::uint64_t kBitsPerBlock = 64;  // the bitmap costs at most 8 bytes a block
  if (largest / kBitsPerBlock <= seen) {
    std::vector<bool> known(static_cast<std::size_t>(largest) + 1);
    for (std::size_t i = 0; i < trace.records.size(); ++i) {
      for (const std::uint32_t id : trace.hash_ids_of(i)) {
        if (!known[id]) {
          known[id] = true;
          ++out.distinct_blocks;
        }
      }
    }
  } else {
    std::vector<std::uint32_t> ids;
    ids.reserve(static_cast<std::size_t>(seen));
    for (std::size_t i = 0; i < trace.records.size(); ++i) {
      const auto range = trace.hash_ids_of(i);
      ids.insert(ids.end(), range.begin(), range.end());
    }
    std::sort(ids.begin(), ids.end());
    out.distinct_blocks =
        static_cast<std::uint64_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
  }
  out.block_reuse =
      static_cast<double>(out.blocks_seen - out.distinct_blocks) / static_cast<double>(seen);
  return out;
}

nlohmann::ordered_json token_json(const TokenStats& stats) {
  nlohmann::ordered_json out;
  out["mean"] = stats.mean;
  out["p50"] = stats.p50;
  out["p90"] = stats.p90;
  out["p99"] = stats.p99;
  out["max"] = stats.max;
  return out;
}

}  // namespace

WorkloadProfile profile_workload(const Trace& trace) {
  const LargeVector<TraceRecord>& records = trace.records;
  WorkloadProfile p;
  p.requests = records.size();
  if (records.empty()) return p;
  if (records.front().offset_ns < 0) {
    throw std::invalid_argument("profile_workload: offsets must be >= 0");
  }
  std::int64_t longest_gap = 0;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const std::int64_t gap = records[i].offset_ns - records[i - 1].offset_ns;
    if (gap < 0) throw std::invalid_argument("profile_workload: records out of offset order");
    longest_gap = std::max(longest_gap, gap);
  }
  const std::int64_t span = records.back().offset_ns - records.front().offset_ns;
  p.span_s = seconds(span);
  if (span > 0) p.mean_rate_rps = static_cast<double>(p.requests) / p.span_s;

  if (records.size() >= 2) {
    p.longest_gap_s = seconds(longest_gap);
    const auto gaps = static_cast<double>(records.size() - 1);
    const double mean_gap_s = p.span_s / gaps;
    if (mean_gap_s > 0) {
      double squares = 0;
      for (std::size_t i = 1; i < records.size(); ++i) {
        const double d = seconds(records[i].offset_ns - records[i - 1].offset_ns) - mean_gap_s;
        squares += d * d;
      }
      p.interarrival_cv = std::sqrt(squares / gaps) / mean_gap_s;
    }
  }

  const WindowCounts second = count_windows(records, kNsPerSecond);
  const WindowCounts ten_seconds = count_windows(records, 10 * kNsPerSecond);
  const WindowCounts minute = count_windows(records, 60 * kNsPerSecond);
  p.peak_per_second = second.peak;
  p.peak_per_minute = minute.peak;
  p.index_of_dispersion_1s = second.index_of_dispersion;
  p.index_of_dispersion_10s = ten_seconds.index_of_dispersion;
  p.index_of_dispersion_60s = minute.index_of_dispersion;

  p.input_tokens = token_stats(records, [](const TraceRecord& r) { return r.context_tokens; });
  p.output_tokens = token_stats(records, [](const TraceRecord& r) { return r.generated_tokens; });
  p.blocks = block_reuse(trace);
  return p;
}

nlohmann::ordered_json workload_profile_to_json(const WorkloadProfile& p) {
  nlohmann::ordered_json out;
  out["requests"] = p.requests;
  out["span_s"] = p.span_s;
  out["mean_rate_rps"] = json_number(p.mean_rate_rps);
  out["peak_per_second"] = p.peak_per_second;
  out["peak_per_minute"] = p.peak_per_minute;
  out["interarrival_cv"] = json_number(p.interarrival_cv);
  out["longest_gap_s"] = json_number(p.longest_gap_s);
  out["index_of_dispersion_1s"] = json_number(p.index_of_dispersion_1s);
  out["index_of_dispersion_10s"] = json_number(p.index_of_dispersion_10s);
  out["index_of_dispersion_60s"] = json_number(p.index_of_dispersion_60s);
  out["input_tokens"] = token_json(p.input_tokens);
  out["output_tokens"] = token_json(p.output_tokens);
  if (p.blocks) {
    out["blocks_seen"] = p.blocks->blocks_seen;
    out["distinct_blocks"] = p.blocks->distinct_blocks;
    out["block_reuse"] = p.blocks->block_reuse;
  } else {
    out["blocks_seen"] = nullptr;
    out["distinct_blocks"] = nullptr;
    out["block_reuse"] = nullptr;
  }
  return out;
}

}  // namespace infersim
