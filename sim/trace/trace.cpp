#include "trace/trace.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/input_error.hpp"

namespace infersim {

std::uint64_t Trace::total_context_tokens() const {
  std::uint64_t sum = 0;
  for (const TraceRecord& r : records)
    sum += r.context_tokens;
  return sum;
}

std::uint64_t Trace::total_generated_tokens() const {
  std::uint64_t sum = 0;
  for (const TraceRecord& r : records)
    sum += r.generated_tokens;
  return sum;
}

void normalize_trace(Trace& trace) {
  trace.out_of_order = 0;
  if (trace.records.empty()) return;
  std::int64_t origin = trace.records.front().offset_ns;
  for (std::size_t i = 1; i < trace.records.size(); ++i) {
    const std::int64_t t = trace.records[i].offset_ns;
    if (t < trace.records[i - 1].offset_ns) ++trace.out_of_order;
    origin = std::min(origin, t);
  }
  trace.origin_ns = origin;
  for (TraceRecord& r : trace.records) {
    if (__builtin_sub_overflow(r.offset_ns, origin, &r.offset_ns)) {
      throw InputError(trace.path, 0, "", "timestamps span more than the int64 nanosecond range");
    }
  }
  if (trace.out_of_order == 0) return;
  if (trace.hash_ranges.empty()) {
    std::stable_sort(
        trace.records.begin(), trace.records.end(),
        [](const TraceRecord& a, const TraceRecord& b) { return a.offset_ns < b.offset_ns; });
    return;
  }
  // The records and their hash ranges in the same new order.
  std::vector<std::size_t> order(trace.records.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return trace.records[a].offset_ns < trace.records[b].offset_ns;
  });
  LargeVector<TraceRecord> records(order.size());
  std::vector<HashRange> ranges(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    records[i] = trace.records[order[i]];
    ranges[i] = trace.hash_ranges[order[i]];
  }
  trace.records = std::move(records);
  trace.hash_ranges = std::move(ranges);
}

std::span<const std::uint32_t> Trace::hash_ids_of(std::size_t i) const {
  if (hash_ranges.empty()) return {};
  const HashRange r = hash_ranges.at(i);
  if (std::uint64_t{r.begin} + r.count > hash_ids.size()) {
    throw std::invalid_argument("a record's hash ids lie outside the trace's");
  }
  return {hash_ids.data() + r.begin, r.count};
}

}  // namespace infersim
