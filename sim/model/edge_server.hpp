// The multi-core edge server (MODEL.md section 7): cores are assigned in issue
// order; each request takes the core that becomes free earliest and starts when
// both it and that core are there.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sim_time.hpp"

namespace infersim {

struct CoreAssignment {
  std::uint32_t core = 0;
  SimTime start;
  SimTime finish;
};

class EdgeServer {
 public:
  explicit EdgeServer(std::uint32_t cores);

  // Called in issue order. Ties between equally free cores go to the lowest index.
  CoreAssignment assign(SimTime server_arrival, Duration exec);

  std::uint32_t cores() const { return cores_; }
  Duration busy() const { return busy_; }

 private:
  struct FreeCore {
    SimTime free_at;
    std::uint32_t core;
    bool operator>(const FreeCore& o) const {
      return free_at != o.free_at ? free_at > o.free_at : core > o.core;
    }
  };
  std::uint32_t cores_;
  std::vector<FreeCore> heap_;  // min-heap on (free_at, core)
  Duration busy_;
};

}  // namespace infersim
