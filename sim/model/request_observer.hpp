// What the simulation tells the outside world. Models never print or write;
// reporters listen here: to each request's outcome once it is complete
// (RequestObserver, in id order), and to what the server did as it did it
// (ServerObserver: busy time, batching steps, token gaps).
#pragma once

#include <cstdint>
#include <span>

#include "core/sim_time.hpp"
#include "model/server_model.hpp"
#include "request/request.hpp"

namespace infersim {

// Where and when one request was served (MODEL.md section 7, BATCHING.md
// section 7).
struct RequestOutcome {
  std::uint32_t device = 0;
  std::uint32_t unit = 0;  // the core (edge) or the replica (batching) that served it
  SimTime server_arrival;
  SimTime queued;  // the turn that took it: server_arrival, unless replayed at turns (10b)
  SimTime start;
  SimTime finish;
  SimTime response;
  SimTime first_token;                  // the first generated token reaches the device
  SimTime first_token_server;           // ... leaves the server
  std::uint32_t preemptions = 0;        // batching: times preempted by recompute
  std::uint32_t prefix_hit_tokens = 0;  // batching: prompt tokens found in the prefix cache
  // Disaggregated (BATCHING.md section 12): handed over to decode replica
  // `decode_unit`, its KV transfer ending at `transfer_end`, first admitted
  // there at `decode_start`. False for a request served on one replica.
  bool handed_over = false;
  std::uint32_t decode_unit = 0;
  SimTime transfer_end;
  SimTime decode_start;
  // Refused on reaching the server (BATCHING.md section 2): only device and
  // server_arrival hold; every other instant is server_arrival.
  bool rejected = false;

  Duration wait() const { return start - server_arrival; }
};

class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // Once a request, in id order (which is issue order), when its outcome is
  // complete: its response has been decided (or it was rejected).
  virtual void on_request(std::uint64_t id, const Request& request,
                          const RequestOutcome& outcome) = 0;
};

class ServerObserver {
 public:
  virtual ~ServerObserver() = default;
  // ServerContext::busy, stepped and token_gaps, as the server reports them.
  // A step is busy time of its replica over [start, end): an observer that
  // reads steps is told it by on_step alone, one that reads busy time alone
  // by on_busy (a step is a few hundred instructions; one call for both
  // saves a good part of what a second one costs).
  virtual void on_busy(std::uint32_t /*unit*/, SimTime /*from*/, SimTime /*to*/) {}
  virtual void on_step(const StepRecord& /*step*/) {}
  virtual void on_token_gaps(std::span<const Duration> /*gaps*/) {}
  // The reports it reads, a bit each: the simulation calls it for those alone
  // (a step is a few hundred instructions; a call to every observer for each
  // of its three reports added a good part of that). Every one by default.
  static constexpr unsigned kBusy = 1, kSteps = 2, kTokenGaps = 4;
  virtual unsigned reads() const { return kBusy | kSteps | kTokenGaps; }
};

}  // namespace infersim
