#include "model/network_path.hpp"

#include <cstdio>

#include "core/input_error.hpp"

namespace infersim {

NetworkPath::NetworkPath(std::vector<Hop> hops) : hops_(std::move(hops)) {
  for (const Hop& hop : hops_) {
    hop_latency_.push_back(Duration::from_seconds(hop.latency_s));
    latency_ += hop_latency_.back();
  }
}

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void too_slow(double bits, const Hop& hop, double seconds) {
  char text[320];
  std::snprintf(text, sizeof(text),
                "%.6g bits of a request take %.3g s over hop '%s' (%.6g Mbit/s), more than the "
                "1e9 s a transfer may last on the nanosecond clock: fewer bytes a token or a "
                "faster hop",
                bits, seconds, hop.name.c_str(), hop.bandwidth_mbps);
  throw InputError("", 0, "tokens.bytes_per_token, network.hops", text);
}

}  // namespace

Duration NetworkPath::transfer(double bits) const {
  Duration total;
  for (std::size_t h = 0; h < hops_.size(); ++h) {
    total += hop_latency_[h];
    const double seconds = bits / (hops_[h].bandwidth_mbps * 1e6);
    if (!(seconds <= kLongestDurationS)) [[unlikely]]
      too_slow(bits, hops_[h], seconds);
    total += Duration::from_seconds(seconds);
  }
  return total;
}

std::vector<Hop> default_hops() {
  return {{"wifi", 0.005, 1300}, {"man", 0.010, 1000}};
}

}  // namespace infersim
