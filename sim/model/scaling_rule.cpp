#include "model/scaling_rule.hpp"

#include "model/hpa_rule.hpp"

namespace infersim {

std::unique_ptr<ScalingRule> make_scaling_rule(const Autoscale& autoscale) {
  return std::make_unique<HpaRule>(autoscale);
}

}  // namespace infersim
