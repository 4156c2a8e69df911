// An event and its total order key (time, phase, seq). seq counts every
// schedule call, so events at the same time and phase run first-in first-out;
// nothing ever breaks a tie by address or hash.
#pragma once

#include <cstdint>

#include "core/sim_time.hpp"

namespace infersim {

// Within one instant, lower phases run first. Departures come before arrivals
// so that a request leaving and one arriving at the same nanosecond are seen in
// that order by every observer.
enum class Phase : std::uint8_t { kDeparture = 0, kArrival = 1 };

struct EventKey {
  SimTime time;
  Phase phase = Phase::kArrival;
  std::uint64_t seq = 0;

  friend constexpr bool operator<(const EventKey& a, const EventKey& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.phase != b.phase) return a.phase < b.phase;
    return a.seq < b.seq;
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

}  // namespace infersim
