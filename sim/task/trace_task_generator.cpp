#include "task/trace_task_generator.hpp"

#include <cmath>
#include <stdexcept>

namespace infersim {

SimTime apply_resolution(SimTime t, Duration resolution) {
  const std::int64_t r = resolution.count_ns();
  if (r <= 0) return t;
  const std::int64_t shifted = t.count_ns() + r / 2;
  // floor division, correct for negative values as well
  std::int64_t q = shifted / r;
  if ((shifted % r != 0) && ((shifted < 0) != (r < 0))) --q;
  return SimTime::ns(q * r);
}

SimTime arrival_for_offset(std::int64_t offset_ns, const ArrivalKnobs& knobs) {
  SimTime t = SimTime::ns(offset_ns);
  if (knobs.time_scale != 1) {
    t = SimTime::ns(std::llround(static_cast<double>(offset_ns) * knobs.time_scale));
  }
  return apply_resolution(t, knobs.resolution);
}

SimTime run_length_for(SimTime last_arrival) {
  constexpr std::int64_t kMinute = 60'000'000'000;
  const std::int64_t t = last_arrival.count_ns();
  const std::int64_t minutes = t / kMinute + (t % kMinute > 0 ? 1 : 0);
  return SimTime::ns(minutes * kMinute);
}

GeneratedTasks TraceTaskGenerator::generate(const Trace& trace) const {
  GeneratedTasks out;
  std::vector<SimTime> arrivals;
  arrivals.reserve(trace.records.size());
  for (const TraceRecord& r : trace.records)
    arrivals.push_back(arrival_for_offset(r.offset_ns, arrival_));
  const SimTime last = arrivals.empty() ? SimTime::zero() : arrivals.back();
  out.run_length = arrival_.duration ? SimTime::zero() + *arrival_.duration : run_length_for(last);
  out.tasks.reserve(trace.records.size());
  for (std::size_t k = 0; k < trace.records.size(); ++k) {
    if (arrivals[k] > out.run_length) {
      ++out.dropped;
      continue;
    }
    const TraceRecord& r = trace.records[k];
    out.tasks.push_back(make_task(arrivals[k], r.context_tokens, r.generated_tokens, task_));
  }
  return out;
}

}  // namespace infersim
