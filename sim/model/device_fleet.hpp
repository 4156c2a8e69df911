// The device fleet: N devices that issue the requests in turn, request k from
// device k mod N (MODEL.md section 4), so the fleet stays evenly loaded while
// the instantaneous arrival rate stays exactly as recorded.
#pragma once

#include <cstdint>
#include <vector>

namespace infersim {

class DeviceFleet {
 public:
  explicit DeviceFleet(std::uint32_t devices) : issued_(devices, 0) {}

  std::uint32_t size() const { return static_cast<std::uint32_t>(issued_.size()); }
  // Records that request k was issued and returns its device.
  std::uint32_t issue(std::uint64_t k) {
    const auto device = static_cast<std::uint32_t>(k % issued_.size());
    ++issued_[device];
    return device;
  }
  std::uint64_t issued_by(std::uint32_t device) const { return issued_[device]; }

 private:
  std::vector<std::uint64_t> issued_;
};

}  // namespace infersim
