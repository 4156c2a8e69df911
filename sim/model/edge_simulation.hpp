// The edge model on the event engine: devices issue the tasks in order, each
// request crosses the network, takes a core, and its result comes back. Two
// events a request: its issue (arrival phase) and its response (departure phase).
#pragma once

#include <vector>

#include "engine/engine.hpp"
#include "model/device_fleet.hpp"
#include "model/edge_server.hpp"
#include "model/network_path.hpp"
#include "model/observer_relay.hpp"
#include "model/request_observer.hpp"
#include "request/request.hpp"
#include "request/request_list.hpp"

namespace infersim {

class EdgeSimulation {
 public:
  // `tasks` must be in issue order (non-decreasing arrival) and outlive run().
  EdgeSimulation(const RequestList& tasks, DeviceFleet& fleet, const NetworkPath& network,
                 EdgeServer& server);

  void add_observer(RequestObserver& observer) { relay_.add(observer); }
  // Observers called on a second thread while the model runs (the same calls
  // in the same order): for large runs with a core to spare.
  void call_observers_on_thread(bool on) { observer_thread_ = on; }
  void run();

  std::uint64_t events_executed() const { return engine_.executed(); }

 private:
  enum Kind : std::uint32_t { kIssue = 0, kResponse = 1 };
  void issue(std::uint64_t k);
  void respond(std::uint64_t subject);

  const RequestList& tasks_;
  DeviceFleet& fleet_;
  const NetworkPath& network_;
  EdgeServer& server_;
  ObserverRelay relay_;
  bool observer_thread_ = false;
  // The requests in flight, each in a slot from issue to response (a
  // response event's subject is its slot), so the memory held follows the
  // requests in flight, not the whole run; kept only for observers of
  // completions (else a response event's subject is its request).
  struct InFlight {
    std::uint64_t id = 0;
    Request task;
    RequestOutcome outcome;
  };
  InFlight& take_slot();
  std::vector<InFlight> in_flight_;
  std::vector<std::uint64_t> free_slots_;
  bool keep_in_flight_ = true;
  Engine<QuaternaryHeapQueue> engine_;
};

}  // namespace infersim
