// The models on the event engine: devices issue the requests in order, each
// request crosses the network to the server model (edge or batching, behind
// ServerModel), which serves it on events of its own and says what happened;
// the simulation turns that into each request's outcome (its response back at
// the device) and hands the outcomes to the observers in id order, and the
// server's other reports to the server observers as they come.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/engine.hpp"
#include "model/device_fleet.hpp"
#include "model/network_path.hpp"
#include "model/request_observer.hpp"
#include "model/server_model.hpp"
#include "request/request_list.hpp"

namespace infersim {

// Closed-loop load (MODEL.md section 4b): at most `max_concurrency` requests
// in flight, each next one issued when one in flight gets its response, as
// `vllm bench serve --max-concurrency N` and aiperf's --concurrency issue
// them. The first `warmups` requests are copies of the list's first one, run
// before the list under the same cap and reported to no observer; the list's
// requests start when the last warm-up's response is in. 0: open loop.
struct ClosedLoop {
  std::uint32_t max_concurrency = 0;
  std::uint64_t warmups = 0;
  // No cap (vLLM bench's --request-rate without --max-concurrency): every
  // request a client of its own, sent at its pacing instant.
  bool uncapped = false;

  bool on() const { return max_concurrency > 0 || uncapped; }
  // The clients for `requests` measured requests (and the warm-ups).
  std::uint64_t clients(std::uint64_t requests) const {
    return uncapped ? requests + warmups : max_concurrency;
  }
};

class Simulation : private ServerContext {
 public:
  // `requests` must be in issue order (non-decreasing arrival) and outlive run().
  Simulation(const RequestList& requests, DeviceFleet& fleet, const NetworkPath& network,
             ServerModel& server);
  // Closed loop: the list's arrivals are the pacing offsets from the start of
  // the measured requests (all 0: unpaced), and run() writes each request's
  // send instant into the list as its arrival. The fleet has a device a
  // client (max_concurrency), each waiting for its last response.
  Simulation(RequestList& requests, DeviceFleet& fleet, const NetworkPath& network,
             ServerModel& server, ClosedLoop loop);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  void add_observer(RequestObserver& observer) { observers_.push_back(&observer); }
  // Called for the reports it reads (ServerObserver::reads).
  void add_server_observer(ServerObserver& observer);
  // Runs every request to its outcome. Throws std::logic_error when the server
  // leaves a request neither finished nor rejected.
  void run();

  std::uint64_t events_executed() const { return engine_.executed(); }
  // Closed loop: the instant the measured requests started (the last
  // warm-up's response; 0 without warm-ups).
  SimTime measured_from() const { return measured_from_; }

 private:
  // Event kinds: the simulation's own, then the server's (shifted).
  static constexpr std::uint32_t kIssue = 0;
  static constexpr std::uint32_t kRelease = 1;  // closed loop: a response back at its client
  static constexpr std::uint32_t kServerKinds = 2;

  void issue(std::uint64_t k);
  // Closed loop: issues every request that may go now, in order.
  void issue_ready();
  // Closed loop: a response is back; `subject` its client, bit 32 a warm-up's.
  void release(std::uint64_t subject);
  // The server's reports of the warm-ups go to no observer.
  bool warming_up() const { return warmups_back_ < loop_.warmups; }
  // The request behind an id: a warm-up (a copy of the first) or the list's.
  Request request_of(std::uint64_t id) const {
    return (*requests_)[id < loop_.warmups ? 0 : id - loop_.warmups];
  }
  std::uint64_t total() const { return requests_->size() + loop_.warmups; }
  bool closed() const { return loop_.on(); }
  // The outcomes complete from the oldest undelivered one on, to the observers.
  void deliver();

  // ServerContext
  SimTime now() const override { return engine_.now(); }
  void schedule(SimTime at, Phase phase, std::uint32_t kind, std::uint64_t subject) override;
  bool pending_now_before(Phase phase) const override {
    const EventKey* next = engine_.next_key();
    return next != nullptr && next->time == engine_.now() && next->phase() < phase;
  }
  bool requests_to_come() const override { return issued_ < total(); }
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
  // Closed loop: schedules the release of the client of `r` (request `id`).
  void respond(const InFlight& r, std::uint64_t id);
  InFlight& slot(std::uint64_t id) { return ring_[id & (ring_.size() - 1)]; }

  const RequestList* requests_;
  RequestList* closed_ = nullptr;  // the list whose send instants a closed loop writes
  ClosedLoop loop_;
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
  // Closed loop: requests in flight (issued, response not yet back), the
  // warm-ups whose response is in, the clients free (in the order they
  // freed), the next pacing event's request, and the measured start.
  std::uint64_t in_flight_ = 0;
  std::uint64_t clients_ = 0;
  std::uint64_t warmups_back_ = 0;
  std::deque<std::uint32_t> free_clients_;
  std::uint64_t paced_ = ~std::uint64_t{0};
  SimTime measured_from_;
  Engine<QuaternaryHeapQueue> engine_;
};

}  // namespace infersim
