// The devices' radio energy (MODEL.md section 8's second term): each device
// pays per bit it sends and receives. A server's own energy is the server's to
// say (ServerModel::energy_wh, ServerUsage::energy_wh).
#pragma once

namespace infersim {

struct EnergyKnobs {
  double device_tx_nj_per_bit = 283.17;
  double device_rx_nj_per_bit = 137.01;
};

class RadioEnergy {
 public:
  explicit RadioEnergy(EnergyKnobs knobs) : knobs_(knobs) {}

  // The radios' energy in Wh for the bits sent and received, summed over
  // requests.
  double radio_wh(double request_bits, double result_bits) const {
    return (request_bits * knobs_.device_tx_nj_per_bit +
            result_bits * knobs_.device_rx_nj_per_bit) *
           1e-9 / 3600;
  }
  const EnergyKnobs& knobs() const { return knobs_; }

 private:
  EnergyKnobs knobs_;
};

}  // namespace infersim
