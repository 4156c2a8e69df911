// Kubernetes' Horizontal Pod Autoscaler on a queue metric, without its
// tolerance, as BATCHING.md §11 and §13.3 read it: desired = min(max, max(min,
// ceil(load / target))) in double; more than current starts the difference;
// otherwise the class goes down to the largest desired of the evaluations in
// (t - scale_down_delay, t] (the stabilization window), never up to it.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

#include "model/scaling_rule.hpp"

namespace infersim {

class HpaRule final : public ScalingRule {
 public:
  explicit HpaRule(const Autoscale& autoscale) : autoscale_(autoscale) {}
  Duration interval() const override { return autoscale_.interval; }
  std::int64_t desired(const ScalingObservation& observed) override;

 private:
  Autoscale autoscale_;
  // The stabilization window as a sliding maximum: the evaluations (instant,
  // desired) whose desired no later one equals or passes, so that its values
  // decrease and its front is the largest.
  std::deque<std::pair<SimTime, std::int64_t>> window_;
};

}  // namespace infersim
