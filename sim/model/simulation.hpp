// The models on the event engine: devices issue the requests in order, each
// request crosses the network to the server model (edge or batching, behind
// ServerModel), which serves it on events of its own and says what happened;
// the simulation turns that into each request's outcome (its response back at
// the device) and hands the outcomes to the observers in id order, and the
// server's other reports to the server observers as they come.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/engine.hpp"
#include "model/device_fleet.hpp"
#include "model/network_path.hpp"
#include "model/request_observer.hpp"
#include "model/server_model.hpp"
#include "request/request_list.hpp"

namespace infersim {

class Simulation : private ServerContext {
 public:
  // `requests` must be in issue order (non-decreasing arrival) and outlive run().
  Simulation(const RequestList& requests, DeviceFleet& fleet, const NetworkPath& network,
             ServerModel& server);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  void add_observer(RequestObserver& observer) { observers_.push_back(&observer); }
  // Called for the reports it reads (ServerObserver::reads).
  void add_server_observer(ServerObserver& observer);
  // Runs every request to its outcome. Throws std::logic_error when the server
  // leaves a request neither finished nor rejected.
  void run();

  std::uint64_t events_executed() const { return engine_.executed(); }

 private:
  // Event kinds: the simulation's own, then the server's (shifted).
  static constexpr std::uint32_t kIssue = 0;
  static constexpr std::uint32_t kServerKinds = 1;

  void issue(std::uint64_t k);
  // The outcomes complete from the oldest undelivered one on, to the observers.
  void deliver();

  // ServerContext
  SimTime now() const override { return engine_.now(); }
  void schedule(SimTime at, Phase phase, std::uint32_t kind, std::uint64_t subject) override;
  bool pending_now_before(Phase phase) const override {
    const EventKey* next = engine_.next_key();
    return next != nullptr && next->time == engine_.now() && next->phase() < phase;
  }
  bool requests_to_come() const override { return issued_ < requests_.size(); }
  void started(std::uint64_t id, std::uint32_t unit, SimTime at) override;
  void first_token(std::uint64_t id, SimTime at) override;
  void finished(std::uint64_t id, SimTime at, std::uint32_t preemptions,
                std::uint64_t prefix_hit_tokens) override;
  void decoding(std::uint64_t id, std::uint32_t unit, SimTime transfer_end, SimTime at) override;
  void rejected(std::uint64_t id, SimTime at) override;
  void queued(std::uint64_t id, SimTime at) override { in_flight(id).outcome.queued = at; }
  void busy(std::uint32_t unit, SimTime from, SimTime to) override;
  void stepped(const StepRecord& step) override;
  void token_gaps(std::span<const Duration> gaps) override;

  // A request from its issue until its outcome is delivered.
  struct InFlight {
    Request request;
    RequestOutcome outcome;
    bool done = false;
  };
  InFlight& in_flight(std::uint64_t id);
  InFlight& slot(std::uint64_t id) { return ring_[id & (ring_.size() - 1)]; }

  const RequestList& requests_;
  DeviceFleet& fleet_;
  const NetworkPath& network_;
  ServerModel& server_;
  std::vector<RequestObserver*> observers_;
  // The server observers that read each report; those that read busy time
  // but not steps are told a step's as busy time.
  std::vector<ServerObserver*> busy_observers_, step_observers_, gap_observers_;
  std::vector<ServerObserver*> step_busy_observers_;
  // Requests from the oldest undelivered (id delivered_) to the last issued
  // (id issued_ - 1), request id in slot id mod the ring's size (a power of
  // two, doubled when full): what is held follows the requests in flight,
  // not the run.
  std::vector<InFlight> ring_;
  std::uint64_t delivered_ = 0;
  std::uint64_t issued_ = 0;
  Engine<QuaternaryHeapQueue> engine_;
};

}  // namespace infersim
