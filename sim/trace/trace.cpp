#include "trace/trace.hpp"

#include <algorithm>

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
  if (trace.out_of_order > 0) {
    std::stable_sort(
        trace.records.begin(), trace.records.end(),
        [](const TraceRecord& a, const TraceRecord& b) { return a.offset_ns < b.offset_ns; });
  }
}

}  // namespace infersim
