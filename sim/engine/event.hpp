// An event and its total order key (time, phase, seq). seq counts every
// schedule call, so events at the same time and phase run first-in first-out;
// nothing ever breaks a tie by address or hash.
#pragma once

#include <cstdint>

#include "core/sim_time.hpp"

namespace infersim {

// Within one instant, lower phases run first. Departures come before arrivals
// so that a request leaving and one arriving at the same nanosecond are seen in
// that order by every observer; a server's decisions (a batching step
// scheduled) come after both, once it knows everything that happens then.
// Within an instant: replicas becoming active (BATCHING.md section 11 (0)),
// departures, KV transfers ending (section 12 (1b)), arrivals, scheduling,
// then autoscaling evaluations (11 (4)).
enum class Phase : std::uint8_t {
  kActivate = 0,
  kDeparture = 1,
  kTransfer = 2,
  kArrival = 3,
  kSchedule = 4,
  kEvaluate = 5
};

struct EventKey {
  EventKey() = default;
  // seq below 2^56 (a run schedules fewer events than that).
  constexpr EventKey(SimTime at, Phase phase, std::uint64_t seq)
      : time(at), order((static_cast<std::uint64_t>(phase) << kSeqBits) | seq) {}

  constexpr Phase phase() const { return static_cast<Phase>(order >> kSeqBits); }
  constexpr std::uint64_t seq() const { return order & ((std::uint64_t{1} << kSeqBits) - 1); }

  // (phase, seq) in one word, so that the key compares in two steps.
  static constexpr unsigned kSeqBits = 56;
  SimTime time;
  std::uint64_t order = static_cast<std::uint64_t>(Phase::kArrival) << kSeqBits;

  friend constexpr bool operator<(const EventKey& a, const EventKey& b) {
    return a.time != b.time ? a.time < b.time : a.order < b.order;
  }
  friend constexpr bool operator==(const EventKey&, const EventKey&) = default;
};

// What happens is told by `kind` (model-defined) and `subject` (typically a
// request index); the engine never looks inside.
struct Event {
  EventKey key;
  std::uint32_t kind = 0;
  std::uint64_t subject = 0;
};
static_assert(sizeof(EventKey) == 16);

}  // namespace infersim
