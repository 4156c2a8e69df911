#include "model/edge_simulation.hpp"

#include <stdexcept>

namespace infersim {

EdgeSimulation::EdgeSimulation(const RequestList& tasks, DeviceFleet& fleet,
                               const NetworkPath& network, EdgeServer& server)
    : tasks_(tasks), fleet_(fleet), network_(network), server_(server) {
  for (std::size_t k = 1; k < tasks_.size(); ++k) {
    if (tasks_.arrival(k) < tasks_.arrival(k - 1)) {
      throw std::logic_error("EdgeSimulation: tasks are not in arrival order");
    }
  }
}

void EdgeSimulation::run() {
  in_flight_.clear();
  free_slots_.clear();
  keep_in_flight_ = relay_.wants_completions();
  if (!tasks_.empty()) engine_.schedule_at(tasks_.arrival(0), Phase::kArrival, kIssue, 0);
  if (observer_thread_) relay_.start_thread();
  try {
    engine_.run([this](const Event& e) {
      if (e.kind == kIssue) {
        issue(e.subject);
      } else {
        respond(e.subject);
      }
    });
  } catch (...) {
    try {
      relay_.finish();
    } catch (...) {  // the model's error is the one reported
    }
    throw;
  }
  relay_.finish();
}

void EdgeSimulation::issue(std::uint64_t k) {
  // A request stays in a slot until its response only for observers that
  // want its completion; else the response event names the request alone.
  InFlight here;
  InFlight& r = keep_in_flight_ ? take_slot() : here;
  r.id = k;
  r.task = tasks_[k];
  const Request& task = r.task;
  RequestOutcome& o = r.outcome;
  o.device = fleet_.issue(k);
  o.server_arrival = task.arrival + network_.transfer(task.request_bits);
  const CoreAssignment a = server_.assign(o.server_arrival, task.exec);
  o.core = a.core;
  o.start = a.start;
  o.finish = a.finish;
  o.response = a.finish + network_.transfer(task.result_bits);
  o.first_token = a.start + task.first_token + network_.latency();
  relay_.issued(k, task, o);
  engine_.schedule_at(o.response, Phase::kDeparture, kResponse,
                      keep_in_flight_ ? static_cast<std::uint64_t>(&r - in_flight_.data()) : k);
  if (k + 1 < tasks_.size())
    engine_.schedule_at(tasks_.arrival(k + 1), Phase::kArrival, kIssue, k + 1);
}

EdgeSimulation::InFlight& EdgeSimulation::take_slot() {
  if (free_slots_.empty()) return in_flight_.emplace_back();
  const std::uint64_t slot = free_slots_.back();
  free_slots_.pop_back();
  return in_flight_[slot];
}

void EdgeSimulation::respond(std::uint64_t subject) {
  if (!keep_in_flight_) return;
  const InFlight& done = in_flight_[subject];
  relay_.completed(done.id, done.task, done.outcome);
  free_slots_.push_back(subject);
}

}  // namespace infersim
