// What the edge model tells the outside world: a request was issued by its
// device, and its response reached the device. Models never print or write;
// reporters listen here.
#pragma once

#include <cstdint>

#include "core/sim_time.hpp"
#include "request/request.hpp"

namespace infersim {

// Where and when one request was served (MODEL.md section 7).
struct RequestOutcome {
  std::uint32_t device = 0;
  std::uint32_t core = 0;
  SimTime server_arrival;
  SimTime start;
  SimTime finish;
  SimTime response;
  SimTime first_token;  // the first generated token reaches the device

  Duration wait() const { return start - server_arrival; }
};

class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // At the request's arrival; the outcome is already decided (cores are
  // assigned in issue order).
  virtual void on_issued(std::uint64_t /*id*/, const Request& /*task*/,
                         const RequestOutcome& /*outcome*/) {}
  // At the response's arrival at the device.
  virtual void on_completed(std::uint64_t /*id*/, const Request& /*task*/,
                            const RequestOutcome& /*outcome*/) {}
  // False for an observer that has nothing to do on_completed: it is then not
  // called (a call a request saved; the outcome is known at issue).
  virtual bool wants_completions() const { return true; }
};

}  // namespace infersim
