#include "request/trace_request_generator.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/input_error.hpp"
#include "core/large_array.hpp"

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

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void stretched_past_the_clock(std::int64_t offset_ns,
                                                                     double time_scale) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "stretches the trace's offset of %.6g s to %.3g s, past the 8e9 s (about 253 "
                "years) an arrival may reach on the nanosecond clock",
                static_cast<double>(offset_ns) / 1e9,
                static_cast<double>(offset_ns) / 1e9 * time_scale);
  throw InputError("", 0, "run.time_scale", text);
}

}  // namespace

SimTime arrival_for_offset(std::int64_t offset_ns, const ArrivalKnobs& knobs) {
  SimTime t = SimTime::ns(offset_ns);
  if (knobs.time_scale != 1) {
    const double scaled = static_cast<double>(offset_ns) * knobs.time_scale;
    if (!(scaled < kLatestArrivalNs)) [[unlikely]]
      stretched_past_the_clock(offset_ns, knobs.time_scale);
    t = SimTime::ns(std::llround(scaled));
  }
  return apply_resolution(t, knobs.resolution);
}

SimTime run_length_for(SimTime last_arrival) {
  constexpr std::int64_t kMinute = 60'000'000'000;
  const std::int64_t t = last_arrival.count_ns();
  const std::int64_t minutes = t / kMinute + (t % kMinute > 0 ? 1 : 0);
  return SimTime::ns(minutes * kMinute);
}

OffsetReplay::OffsetReplay(const ArrivalKnobs& knobs)
    : knobs_(knobs), start_(knobs.start_offset ? knobs.start_offset->count_ns() : 0) {}

std::optional<std::int64_t> OffsetReplay::next(std::int64_t offset) {
  if ((knobs_.start_offset && offset < start_) ||
      (knobs_.end_offset && offset > knobs_.end_offset->count_ns())) {
    return std::nullopt;
  }
  if (knobs_.max_idle_gap && any_ && offset - previous_ > knobs_.max_idle_gap->count_ns()) {
    shift_ += offset - previous_ - knobs_.max_idle_gap->count_ns();
  }
  previous_ = offset;
  any_ = true;
  return offset - start_ - shift_;
}

ReplayedOffsets replayed_offsets(const Trace& trace, const ArrivalKnobs& knobs) {
  ReplayedOffsets out;
  out.offset_ns.reserve(trace.records.size());
  out.record.reserve(trace.records.size());
  OffsetReplay replay(knobs);
  for (std::size_t k = 0; k < trace.records.size(); ++k) {
    const std::optional<std::int64_t> offset = replay.next(trace.records[k].offset_ns);
    if (!offset) {
      ++out.outside_window;
      continue;
    }
    out.offset_ns.push_back(*offset);
    out.record.push_back(k);
  }
  return out;
}

GeneratedRequests TraceRequestGenerator::generate(const Trace& trace) const {
  return generate_from(LargeVector<TraceRecord>(trace.records.begin(), trace.records.end()), trace);
}

GeneratedRequests TraceRequestGenerator::generate_taking_records(Trace& trace) const {
  LargeVector<TraceRecord> records = std::move(trace.records);
  trace.records = {};
  return generate_from(std::move(records), trace);
}

GeneratedRequests TraceRequestGenerator::generate_from(LargeVector<TraceRecord> records,
                                                       const Trace& trace) const {
  GeneratedRequests out;
  // Each kept record's block ids go with it.
  const bool ids = !trace.hash_ranges.empty();
  std::vector<HashRange> ranges;
  if (ids) ranges.reserve(records.size());
  // Each replayed record, its offset turned into its arrival, moved down over
  // those the window left out.
  OffsetReplay replay(arrival_);
  std::size_t kept = 0;
  for (std::size_t k = 0; k < records.size(); ++k) {
    const std::optional<std::int64_t> offset = replay.next(records[k].offset_ns);
    if (!offset) {
      ++out.outside_window;
      continue;
    }
    TraceRecord task = records[k];
    task.offset_ns = arrival_for_offset(*offset, arrival_).count_ns();
    records[kept++] = task;
    if (ids) ranges.push_back(trace.hash_ranges[k]);
  }
  records.resize(kept);
  const SimTime last = kept == 0 ? SimTime::zero() : SimTime::ns(records.back().offset_ns);
  out.run_length = arrival_.duration ? SimTime::zero() + *arrival_.duration : run_length_for(last);
  // Arrivals never decrease along the trace, so the records arriving after
  // the run's end are the last ones.
  while (!records.empty() && SimTime::ns(records.back().offset_ns) > out.run_length) {
    records.pop_back();
    if (ids) ranges.pop_back();
    ++out.dropped;
  }
  out.tasks = RequestList::from_records(task_, std::move(records));
  if (ids) {
    out.tasks.use_block_ids(trace.hash_ids, trace.block_id_tokens);
    out.tasks.set_block_ranges(std::move(ranges));
  }
  return out;
}

}  // namespace infersim
