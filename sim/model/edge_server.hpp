// The multi-core edge server (MODEL.md section 7): cores are assigned in issue
// order; each request takes the core that becomes free earliest and starts when
// both it and that core are there. Its cost of a request (section 5's MI and
// MIPS) and its power (section 8) are its own knobs.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sim_time.hpp"
#include "model/server_model.hpp"

namespace infersim {

struct EdgeServerKnobs {
  std::uint32_t cores = 8;
  double mi_per_context_token = 12;
  double mi_per_generated_token = 2000;
  double mips_per_core = 60000;
  double idle_power_w = 420;  // whole server
  double max_power_w = 720;   // whole server, all cores busy
};

// What a request costs on one core (MODEL.md section 5).
struct EdgeCost {
  double length_mi = 0;
  Duration exec;         // on one core
  Duration first_token;  // from start to the first generated token leaving the core
};

// Section 5, written out term by term in the order the spec gives.
inline EdgeCost edge_cost(double context_tokens, double generated_tokens,
                          const EdgeServerKnobs& k) {
  EdgeCost cost;
  cost.length_mi =
      context_tokens * k.mi_per_context_token + generated_tokens * k.mi_per_generated_token;
  cost.exec = Duration::from_seconds(cost.length_mi / k.mips_per_core);
  cost.first_token = generated_tokens >= 1
                         ? Duration::from_seconds((context_tokens * k.mi_per_context_token +
                                                   k.mi_per_generated_token) /
                                                  k.mips_per_core)
                         : cost.exec;
  return cost;
}

struct CoreAssignment {
  std::uint32_t core = 0;
  SimTime start;
  SimTime finish;
};

class EdgeServer : public ServerModel {
 public:
  explicit EdgeServer(EdgeServerKnobs knobs);
  // A server of `cores` cores with the default costs and power.
  explicit EdgeServer(std::uint32_t cores) : EdgeServer(EdgeServerKnobs{.cores = cores}) {}

  // Called in issue order. Ties between equally free cores go to the lowest index.
  CoreAssignment assign(SimTime server_arrival, Duration exec);

  std::uint32_t cores() const { return knobs_.cores; }
  Duration busy() const { return busy_; }
  const EdgeServerKnobs& knobs() const { return knobs_; }

  // ServerModel: a request's core, start and finish are known when it is
  // issued (cores are taken in issue order), so it is served at once and the
  // server schedules no event of its own.
  void attach(ServerContext& context) override { context_ = &context; }
  void accept(std::uint64_t id, const Request& request, SimTime server_arrival) override;
  void handle(std::uint32_t, std::uint64_t) override {}
  ServerUsage usage(SimTime end) const override;
  ServerDescription describe() const override;
  double energy_wh(Duration length, Duration busy) const override;

 private:
  struct FreeCore {
    SimTime free_at;
    std::uint32_t core;
    bool operator>(const FreeCore& o) const {
      return free_at != o.free_at ? free_at > o.free_at : core > o.core;
    }
  };
  EdgeServerKnobs knobs_;
  std::vector<FreeCore> heap_;  // min-heap on (free_at, core)
  Duration busy_;
  ServerContext* context_ = nullptr;
};

}  // namespace infersim
