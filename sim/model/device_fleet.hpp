// The device fleet: N devices that issue the requests in turn, request k from
// device k mod N (MODEL.md section 4), so the fleet stays evenly loaded while
// the instantaneous arrival rate stays exactly as recorded.
#pragma once

#include <cstdint>

namespace infersim {

class DeviceFleet {
 public:
  explicit DeviceFleet(std::uint32_t devices) : devices_(devices) {}

  std::uint32_t size() const { return devices_; }
  // The device that issues request k.
  std::uint32_t issue(std::uint64_t k) const { return static_cast<std::uint32_t>(k % devices_); }

 private:
  std::uint32_t devices_;
};

}  // namespace infersim
