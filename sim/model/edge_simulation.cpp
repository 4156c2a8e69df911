#include "model/edge_simulation.hpp"

#include <stdexcept>

namespace infersim {

EdgeSimulation::EdgeSimulation(const TaskList& tasks, DeviceFleet& fleet,
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
  std::uint64_t slot = in_flight_.size();
  if (free_slots_.empty()) {
    in_flight_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  in_flight_[slot].id = k;
  in_flight_[slot].task = tasks_[k];
  const Task& task = in_flight_[slot].task;
  RequestOutcome& o = in_flight_[slot].outcome;
  o.device = fleet_.issue(k);
  o.server_arrival = task.arrival + network_.transfer(task.request_bits);
  const CoreAssignment a = server_.assign(o.server_arrival, task.exec);
  o.core = a.core;
  o.start = a.start;
  o.finish = a.finish;
  o.response = a.finish + network_.transfer(task.result_bits);
  o.first_token = a.start + task.first_token + network_.latency();
  relay_.issued(k, task, o);
  engine_.schedule_at(o.response, Phase::kDeparture, kResponse, slot);
  if (k + 1 < tasks_.size())
    engine_.schedule_at(tasks_.arrival(k + 1), Phase::kArrival, kIssue, k + 1);
}

void EdgeSimulation::respond(std::uint64_t slot) {
  const InFlight& done = in_flight_[slot];
  relay_.completed(done.id, done.task, done.outcome);
  free_slots_.push_back(slot);
}

}  // namespace infersim
