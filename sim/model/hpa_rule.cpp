#include "model/hpa_rule.hpp"

#include <algorithm>
#include <cmath>

namespace infersim {

std::int64_t HpaRule::desired(const ScalingObservation& observed) {
  const Autoscale& a = autoscale_;
  const SimTime now = observed.now;
  // Clamped in double, then made whole (§13.3): load / target may pass any
  // integer (a tiny target makes it infinite).
  const double wanted = std::ceil(static_cast<double>(observed.load) / a.target_requests);
  const auto count = static_cast<std::int64_t>(
      std::min(static_cast<double>(a.max), std::max(static_cast<double>(a.min), wanted)));
  // An evaluation whose desired a later one equals or passes can never be the
  // largest of the window again.
  while (!window_.empty() && window_.back().second <= count)
    window_.pop_back();
  window_.emplace_back(now, count);
  while (now - window_.front().first >= a.scale_down_delay && window_.front().first != now)
    window_.pop_front();
  if (count > observed.current) return count;
  // The largest desired of the window, this evaluation's included.
  return std::min(window_.front().second, observed.current);
}

}  // namespace infersim
