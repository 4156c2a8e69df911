#include "model/network_path.hpp"

namespace infersim {

NetworkPath::NetworkPath(std::vector<Hop> hops) : hops_(std::move(hops)) {
  for (const Hop& hop : hops_) {
    hop_latency_.push_back(Duration::from_seconds(hop.latency_s));
    latency_ += hop_latency_.back();
  }
}

Duration NetworkPath::transfer(double bits) const {
  Duration total;
  for (std::size_t h = 0; h < hops_.size(); ++h) {
    total += hop_latency_[h];
    total += Duration::from_seconds(bits / (hops_[h].bandwidth_mbps * 1e6));
  }
  return total;
}

std::vector<Hop> default_hops() {
  return {{"wifi", 0.005, 1300}, {"man", 0.010, 1000}};
}

}  // namespace infersim
