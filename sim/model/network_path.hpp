// The network path from a device to the edge server: a list of hops, each a
// latency and a bandwidth, with no contention between transfers (MODEL.md
// section 6).
#pragma once

#include <string>
#include <vector>

#include "core/sim_time.hpp"

namespace infersim {

struct Hop {
  std::string name;
  double latency_s = 0;
  double bandwidth_mbps = 1;
};

class NetworkPath {
 public:
  explicit NetworkPath(std::vector<Hop> hops);

  // Time for `bits` to cross every hop: per hop llround(lat*1e9) +
  // llround(bits / (bw*1e6) * 1e9), summed in integers.
  Duration transfer(double bits) const;
  // The hops' latencies alone: how long the first byte of a result takes.
  Duration latency() const { return latency_; }

 private:
  std::vector<Hop> hops_;
  std::vector<Duration> hop_latency_;  // llround(lat*1e9), once a hop
  Duration latency_;
};

// The seed's path: wifi 5 ms at 1300 Mbit/s, then a metropolitan link 10 ms at 1000 Mbit/s.
std::vector<Hop> default_hops();

}  // namespace infersim
