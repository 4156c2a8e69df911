// A batching replica's power and energy (BATCHING.md §9 and §11): P_idle all
// the time it is provisioned, P_max - P_idle more while it steps. The one
// place its energy is worked out: the server's figure, its slices without a
// fleet, and timeseries.csv's slices of a fleet (report/time_series) alike.
#pragma once

#include "core/sim_time.hpp"
#include "model/batching_knobs.hpp"

namespace infersim {

struct ReplicaPower {
  double idle_w = 0;     // P_idle
  double dynamic_w = 0;  // P_max - P_idle

  static ReplicaPower of(const BatchingKnobs& k) {
    return {k.gpu_idle_w, k.gpu_max_w - k.gpu_idle_w};
  }
};

// Σ (P_idle provisioned + (P_max - P_idle) busy) / 3600 in Wh, from its two
// sums, `idle` and `dynamic`, in watts times 1 / `per_second` seconds (1: W s,
// as the server sums them; 1e9: W ns, as the slices of a fleet gather them).
inline double replica_energy_wh(double idle, double dynamic, double per_second) {
  return (idle + dynamic) / per_second / 3600;
}

// `replicas` replicas of power `p`, each provisioned for `provisioned`,
// stepping `busy` in all, in Wh.
inline double replica_energy_wh(const ReplicaPower& p, double replicas, Duration provisioned,
                                Duration busy) {
  return replica_energy_wh(replicas * p.idle_w * provisioned.seconds(),
                           p.dynamic_w * busy.seconds(), 1);
}

}  // namespace infersim
