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

ReplayedOffsets replayed_offsets(const Trace& trace, const ArrivalKnobs& knobs) {
  ReplayedOffsets out;
  out.offset_ns.reserve(trace.records.size());
  out.record.reserve(trace.records.size());
  const std::int64_t start = knobs.start_offset ? knobs.start_offset->count_ns() : 0;
  std::int64_t shift = 0;  // removed by the gap cap so far
  std::int64_t previous = 0;
  for (std::size_t k = 0; k < trace.records.size(); ++k) {
    const std::int64_t offset = trace.records[k].offset_ns;
    if ((knobs.start_offset && offset < start) ||
        (knobs.end_offset && offset > knobs.end_offset->count_ns())) {
      ++out.outside_window;
      continue;
    }
    if (knobs.max_idle_gap && !out.record.empty() &&
        offset - previous > knobs.max_idle_gap->count_ns()) {
      shift += offset - previous - knobs.max_idle_gap->count_ns();
    }
    previous = offset;
    out.offset_ns.push_back(offset - start - shift);
    out.record.push_back(k);
  }
  return out;
}

GeneratedTasks TraceTaskGenerator::generate(const Trace& trace) const {
  GeneratedTasks out;
  const ReplayedOffsets replayed = replayed_offsets(trace, arrival_);
  out.outside_window = replayed.outside_window;
  std::vector<SimTime> arrivals;
  arrivals.reserve(replayed.offset_ns.size());
  for (const std::int64_t offset : replayed.offset_ns) {
    arrivals.push_back(arrival_for_offset(offset, arrival_));
  }
  const SimTime last = arrivals.empty() ? SimTime::zero() : arrivals.back();
  out.run_length = arrival_.duration ? SimTime::zero() + *arrival_.duration : run_length_for(last);
  out.tasks.reserve(arrivals.size());
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    if (arrivals[i] > out.run_length) {
      ++out.dropped;
      continue;
    }
    const TraceRecord& r = trace.records[replayed.record[i]];
    out.tasks.push_back(make_task(arrivals[i], r.context_tokens, r.generated_tokens, task_));
  }
  return out;
}

}  // namespace infersim
