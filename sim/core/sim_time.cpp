#include "core/sim_time.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace infersim {

std::int64_t seconds_to_ns(double seconds) {
  const double scaled = seconds * 1e9;
  // 2^63 is exactly representable; anything at or beyond it (or NaN) does not fit.
  if (!std::isfinite(scaled) || scaled >= 9223372036854775808.0 ||
      scaled < -9223372036854775808.0) {
    throw std::out_of_range(std::to_string(seconds) +
                            " s is outside the int64 nanosecond range of the clock");
  }
  return std::llround(scaled);
}

}  // namespace infersim
