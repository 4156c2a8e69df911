#include "model/network_path.hpp"

namespace infersim {

NetworkPath::NetworkPath(std::vector<Hop> hops) : hops_(std::move(hops)) {
  for (const Hop& hop : hops_)
    latency_ += Duration::from_seconds(hop.latency_s);
}

Duration NetworkPath::transfer(double bits) const {
  Duration total;
  for (const Hop& hop : hops_) {
    total += Duration::from_seconds(hop.latency_s);
    total += Duration::from_seconds(bits / (hop.bandwidth_mbps * 1e6));
  }
  return total;
}

std::vector<Hop> default_hops() {
  return {{"wifi", 0.005, 1300}, {"man", 0.010, 1000}};
}

}  // namespace infersim
