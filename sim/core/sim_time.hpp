// Simulation time: a signed 64-bit count of nanoseconds in two strong types,
// an instant (SimTime) and a span (Duration). Seconds become nanoseconds once,
// at the edge, as llround(x * 1e9) (MODEL.md section 1).
#pragma once

#include <compare>
#include <cstdint>

namespace infersim {

// llround(seconds * 1e9), computed exactly as written. Throws std::out_of_range
// for a value that is not finite or does not fit in int64 nanoseconds.
std::int64_t seconds_to_ns(double seconds);

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
