// Simulation time: a signed 64-bit count of nanoseconds in two strong types,
// an instant (SimTime) and a span (Duration). Seconds become nanoseconds once,
// at the edge, as llround(x * 1e9) (MODEL.md section 1).
#pragma once

#include <compare>
#include <cstdint>

namespace infersim {

// The start of slice j of `slice_ns` nanoseconds each, saturated at the end
// of the clock: the last slice of a run near it is cut short there.
inline std::int64_t slice_start_ns(std::int64_t j, std::int64_t slice_ns) {
  std::int64_t start = 0;
  return __builtin_mul_overflow(j, slice_ns, &start) ? INT64_MAX : start;
}

// Throws the std::out_of_range of seconds_to_ns.
[[noreturn]] void throw_outside_clock(double seconds);

// The longest duration a model computes or a setting gives, in seconds: 10^9 s
// (about 31.7 years) is 10^18 ns, so that an instant of the first 260 years of
// a run plus one stays on the int64 nanosecond clock (its end, 2^63 - 1 ns, is
// about 292 years).
inline constexpr double kLongestDurationS = 1e9;
// The latest arrival a trace may be stretched to (run.time_scale), in ns:
// about 253 years, leaving the clock a duration's room after it.
inline constexpr double kLatestArrivalNs = 8e18;

// llround(seconds * 1e9), computed exactly as written. Throws std::out_of_range
// for a value that is not finite or does not fit in int64 nanoseconds. Inline
// and without a libm call: it runs several times a request.
inline std::int64_t seconds_to_ns(double seconds) {
  const double scaled = seconds * 1e9;
  // From 1 to 2^51 ns (every step, transfer and latency of a run): llround is
  // floor(scaled + 0.5), and the sum is exact, or reaches the next power of
  // two 2^k and rounds by at most a quarter within [2^k, 2^k + 1), so that its
  // truncation is still the floor. Two dependent instructions rather than the
  // five of the general way below, on every step's path.
  if (scaled >= 1.0 && scaled < 2251799813685248.0) {
    return static_cast<std::int64_t>(scaled + 0.5);
  }
  // 2^63 is exactly representable; anything at or beyond it (or NaN) does not
  // fit. The negated test catches NaN.
  if (!(scaled < 9223372036854775808.0 && scaled >= -9223372036854775808.0)) {
    throw_outside_clock(seconds);
  }
  // llround: truncate, then round half away from zero on the remainder, which
  // is exact (below 2^52 the truncated value converts back exactly; above it
  // every double is a whole number and the remainder is 0).
  const auto whole = static_cast<std::int64_t>(scaled);
  const double rest = scaled - static_cast<double>(whole);
  return whole + (rest >= 0.5) - (rest <= -0.5);
}

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration ns(std::int64_t count) { return Duration(count); }
  static Duration from_seconds(double seconds) { return Duration(seconds_to_ns(seconds)); }
  static constexpr Duration zero() { return Duration(0); }

  constexpr std::int64_t count_ns() const { return ns_; }
  constexpr double seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr Duration operator+(Duration other) const { return Duration(ns_ + other.ns_); }
  constexpr Duration operator-(Duration other) const { return Duration(ns_ - other.ns_); }
  constexpr Duration& operator+=(Duration other) {
    ns_ += other.ns_;
    return *this;
  }
  constexpr auto operator<=>(const Duration&) const = default;

  // This duration divided by n > 0, rounded half away from zero in integer
  // arithmetic (a TPOT, BATCHING.md section 7).
  constexpr Duration divided_by(std::int64_t n) const {
    const std::int64_t q = ns_ / n;
    const std::int64_t r = ns_ % n;
    const std::int64_t twice_r = r < 0 ? -2 * r : 2 * r;
    return Duration(twice_r >= n ? q + (ns_ < 0 ? -1 : 1) : q);
  }

 private:
  constexpr explicit Duration(std::int64_t count) : ns_(count) {}
  std::int64_t ns_ = 0;
};

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime ns(std::int64_t count) { return SimTime(count); }
  static SimTime from_seconds(double seconds) { return SimTime(seconds_to_ns(seconds)); }
  static constexpr SimTime zero() { return SimTime(0); }

  constexpr std::int64_t count_ns() const { return ns_; }
  constexpr double seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr SimTime operator+(Duration d) const { return SimTime(ns_ + d.count_ns()); }
  constexpr Duration operator-(SimTime other) const { return Duration::ns(ns_ - other.ns_); }
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  constexpr explicit SimTime(std::int64_t count) : ns_(count) {}
  std::int64_t ns_ = 0;
};

}  // namespace infersim
