// TraceRequestGenerator: one task per trace record, nothing drawn. Turns each
// record's offset into an arrival (time scale, then time resolution, MODEL.md
// section 3), fixes the run length and drops what arrives after it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/sim_time.hpp"
#include "request/request.hpp"
#include "request/request_list.hpp"
#include "trace/trace.hpp"

namespace infersim {

struct ArrivalKnobs {
  double time_scale = 1;
  Duration resolution;               // 0 = exact
  std::optional<Duration> duration;  // the run length T; none = last arrival rounded up to a minute
  // Before section 3, in trace time: only records with start <= offset <= end
  // are replayed, their offsets counted from start; then every gap between
  // consecutive replayed records longer than max_idle_gap is cut to it,
  // shifting all later records (aiperf's --start-offset, --end-offset,
  // --max-idle-gap).
  std::optional<Duration> start_offset;
  std::optional<Duration> end_offset;
  std::optional<Duration> max_idle_gap;
};

// The records the window keeps, with their offsets after the window and the
// gap cap, in trace order.
struct ReplayedOffsets {
  std::vector<std::int64_t> offset_ns;
  std::vector<std::size_t> record;  // index into Trace::records
  std::uint64_t outside_window = 0;
};
ReplayedOffsets replayed_offsets(const Trace& trace, const ArrivalKnobs& knobs);

// The window and the gap cap applied record by record, in trace order: the
// replayed offset of each record, or none when the window leaves it out.
class OffsetReplay {
 public:
  explicit OffsetReplay(const ArrivalKnobs& knobs);
  std::optional<std::int64_t> next(std::int64_t offset_ns);

 private:
  const ArrivalKnobs& knobs_;
  std::int64_t start_ = 0;
  std::int64_t shift_ = 0;  // removed by the gap cap so far
  std::int64_t previous_ = 0;
  bool any_ = false;
};

// Section 3 steps 1 and 2 for one offset.
SimTime arrival_for_offset(std::int64_t offset_ns, const ArrivalKnobs& knobs);
// Section 3 step 2 alone: floor((t + R/2) / R) * R in integers.
SimTime apply_resolution(SimTime t, Duration resolution);
// Section 3 step 3 when no duration is given: ceil(t_last / 60 s) * 60 s.
SimTime run_length_for(SimTime last_arrival);

struct GeneratedRequests {
  RequestList tasks;                 // in issue order: arrival, then trace position
  SimTime run_length;                // T
  std::uint64_t dropped = 0;         // records arriving after T
  std::uint64_t outside_window = 0;  // records outside the replay window
};

class TraceRequestGenerator {
 public:
  TraceRequestGenerator(ArrivalKnobs arrival, RequestKnobs task) : arrival_(arrival), task_(task) {}
  GeneratedRequests generate(const Trace& trace) const;
  // The same tasks, built in the memory of the trace's records, which it
  // takes (the trace is left without records; its other fields stay).
  GeneratedRequests generate_taking_records(Trace& trace) const;

 private:
  // Both: the tasks built in `records`' memory, with `trace`'s block ids.
  GeneratedRequests generate_from(LargeVector<TraceRecord> records, const Trace& trace) const;

  ArrivalKnobs arrival_;
  RequestKnobs task_;
};

}  // namespace infersim
