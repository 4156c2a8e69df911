#include "core/sim_time.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace infersim {

void throw_outside_clock(double seconds) {
  throw std::out_of_range(std::to_string(seconds) +
                          " s is outside the int64 nanosecond range of the clock");
}

}  // namespace infersim
