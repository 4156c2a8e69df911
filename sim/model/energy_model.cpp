#include "model/energy_model.hpp"

namespace infersim {

double EnergyModel::energy_wh(SimTime end, Duration busy, unsigned cores, double request_bits,
                              double result_bits) const {
  const double end_s = end.seconds();
  const double busy_s = busy.seconds();
  const double server_wh =
      (knobs_.idle_power_w * end_s + (knobs_.max_power_w - knobs_.idle_power_w) * busy_s / cores) /
      3600;
  const double radio_wh =
      (request_bits * knobs_.device_tx_nj_per_bit + result_bits * knobs_.device_rx_nj_per_bit) *
      1e-9 / 3600;
  return server_wh + radio_wh;
}

}  // namespace infersim
