// A class of replicas in a fleet (BATCHING.md section 11): its name, its
// count at 0, its knobs (the section's, under its preset's, under its own),
// the GPUs a replica takes and their price, and how it scales, if it does.
// A run without a fleet is one class, "default", never scaled, priced 0.
// A class with a role serves one side of disaggregated prefill and decode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/sim_time.hpp"
#include "model/batching_knobs.hpp"

namespace infersim {

// Kubernetes' HPA rule on a queue metric, without its tolerance.
struct Autoscale {
  std::int64_t min = 1;
  std::int64_t max = 1;
  Duration interval = Duration::ns(15'000'000'000);
  double target_requests = 8;  // requests (waiting, running, pending) a replica
  Duration startup = Duration::ns(60'000'000'000);
  Duration scale_down_delay = Duration::ns(300'000'000'000);
};

// What a class's replicas do (section 12): both (colocated), or one side of a
// disaggregated fleet.
enum class Role : std::uint8_t { kBoth, kPrefill, kDecode };

inline const char* to_string(Role role) {
  return role == Role::kPrefill ? "prefill" : role == Role::kDecode ? "decode" : "both";
}

struct ReplicaClass {
  std::string name = "default";
  std::int64_t replicas = 1;  // at 0
  BatchingKnobs knobs;        // the knobs its replicas step with
  std::int64_t gpus = 1;      // GPUs a replica
  double price_per_gpu_hour = 0;
  std::optional<Autoscale> autoscale;
  Role role = Role::kBoth;
  std::string preset;  // the preset its knobs came from (the settings'); "" none

  // The slots the class owns: its autoscaling maximum, else its count.
  std::int64_t slots() const { return autoscale ? autoscale->max : replicas; }
};

}  // namespace infersim
