// The energy model (MODEL.md section 8): the server draws its idle power for
// the whole run plus the dynamic share in proportion to its busy core-time; the
// devices' radios pay per bit sent and received.
#pragma once

#include "core/sim_time.hpp"

namespace infersim {

struct EnergyKnobs {
  double idle_power_w = 420;  // whole server
  double max_power_w = 720;   // whole server, all cores busy
  double device_tx_nj_per_bit = 283.17;
  double device_rx_nj_per_bit = 137.01;
};

class EnergyModel {
 public:
  explicit EnergyModel(EnergyKnobs knobs) : knobs_(knobs) {}

  // Energy of the run in Wh: `end` is the run's end, `busy` the summed
  // execution time over `cores`, the bits summed over all requests.
  double energy_wh(SimTime end, Duration busy, unsigned cores, double request_bits,
                   double result_bits) const;
  const EnergyKnobs& knobs() const { return knobs_; }

 private:
  EnergyKnobs knobs_;
};

}  // namespace infersim
