// How many replicas a fleet's class wants (BATCHING.md §11): the interface a
// scaling rule implements, what it observes at an evaluation, and the one
// place a class's `autoscale` becomes its rule. The server keeps the slots:
// it evaluates each class at the multiples of its rule's interval, starts
// and drains the replicas, and asks the rule how many there should be.
#pragma once

#include <cstdint>
#include <memory>

#include "core/sim_time.hpp"
#include "model/replica_class.hpp"

namespace infersim {

// What a rule sees of its class at an evaluation.
struct ScalingObservation {
  SimTime now;               // the evaluation's instant
  std::uint64_t load = 0;    // Σ |waiting| + |running| + pending over its active replicas
  std::int64_t current = 0;  // its starting and active replicas
};

class ScalingRule {
 public:
  virtual ~ScalingRule() = default;
  // The class is evaluated at the multiples of this.
  virtual Duration interval() const = 0;
  // At each evaluation, in time order: the replicas the class should have.
  // Above `current`, the difference starts (in its lowest absent slots, as
  // many as it has); below it, the difference goes (starting replicas at
  // once, the latest started first; then active ones drain, the highest index
  // first).
  virtual std::int64_t desired(const ScalingObservation& observed) = 0;
};

// The rule of a class that autoscales: Kubernetes' HPA (model/hpa_rule.hpp).
std::unique_ptr<ScalingRule> make_scaling_rule(const Autoscale& autoscale);

}  // namespace infersim
