// Division of int64 values by one fixed positive divisor S (0 for t <= 0),
// exact, by a multiplication and a correction: a 64-bit division costs tens of
// cycles, and a time slice is looked up several times a request. Where the
// quotient is below 2^40 the estimate is off by at most one; above, or where
// (q + 1) * S could overflow, a plain division.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace infersim {

class FixedDivisor {
 public:
  explicit FixedDivisor(std::int64_t s)
      : s_(s),
        inv_(1.0 / static_cast<double>(s)),
        // Below L * S with (L + 1) * S representable and L at most 2^40.
        limit_(std::min<std::int64_t>(std::numeric_limits<std::int64_t>::max() / s - 1,
                                      std::int64_t{1} << 40) *
               s) {}
  std::int64_t operator()(std::int64_t t) const {
    if (t <= 0) return 0;
    if (t >= limit_) return t / s_;
    auto q = static_cast<std::int64_t>(static_cast<double>(t) * inv_);
    while (q > 0 && q * s_ > t)
      --q;
    while ((q + 1) * s_ <= t)
      ++q;
    return q;
  }

 private:
  std::int64_t s_;
  double inv_;
  std::int64_t limit_;
};

}  // namespace infersim
