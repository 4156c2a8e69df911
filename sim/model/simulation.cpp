#include "model/simulation.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "core/input_error.hpp"

namespace infersim {
namespace {

[[noreturn, gnu::cold, gnu::noinline]] void transfer_past_the_clock() {
  throw InputError("", 0, "tokens.bytes_per_token, network.hops, run.time_scale",
                   "a request's transfer reaches past the end of the nanosecond clock (2^63 ns, "
                   "about 292 years): fewer bytes a token, faster hops or a shorter trace");
}

// at + d, refused past the clock's end.
SimTime on_clock(SimTime at, Duration d) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(at.count_ns(), d.count_ns(), &sum)) [[unlikely]]
    transfer_past_the_clock();
  return SimTime::ns(sum);
}

}  // namespace

Simulation::Simulation(const RequestList& requests, DeviceFleet& fleet, const NetworkPath& network,
                       ServerModel& server)
    : requests_(requests), fleet_(fleet), network_(network), server_(server) {
  for (std::size_t k = 1; k < requests_.size(); ++k) {
    if (requests_.arrival(k) < requests_.arrival(k - 1)) {
      throw std::logic_error("Simulation: requests are not in arrival order");
    }
  }
}

void Simulation::run() {
  ring_.assign(16, InFlight{});
  delivered_ = 0;
  issued_ = 0;
  server_.attach(*this);
  if (!requests_.empty()) engine_.schedule_at(requests_.arrival(0), Phase::kArrival, kIssue, 0);
  engine_.run([this](const Event& e) {
    if (e.kind == kIssue) {
      issue(e.subject);
    } else {
      server_.handle(e.kind - kServerKinds, e.subject);
    }
  });
  if (delivered_ != requests_.size()) {
    throw std::logic_error("Simulation: the server left request " + std::to_string(delivered_) +
                           " neither finished nor rejected");
  }
}

void Simulation::issue(std::uint64_t k) {
  if (issued_ - delivered_ == ring_.size()) {
    std::vector<InFlight> larger(2 * ring_.size());
    for (std::uint64_t id = delivered_; id < issued_; ++id)
      larger[id & (larger.size() - 1)] = slot(id);
    ring_ = std::move(larger);
  }
  InFlight& r = slot(k);
  r = InFlight{};
  ++issued_;
  r.request = requests_[k];
  RequestOutcome& o = r.outcome;
  o.device = fleet_.issue(k);
  o.server_arrival = on_clock(r.request.arrival, network_.transfer(r.request.request_bits));
  o.queued = o.server_arrival;
  server_.accept(k, r.request, o.server_arrival);
  if (k + 1 < requests_.size())
    engine_.schedule_at(requests_.arrival(k + 1), Phase::kArrival, kIssue, k + 1);
}

Simulation::InFlight& Simulation::in_flight(std::uint64_t id) {
  if (id < delivered_ || id >= issued_) {
    throw std::logic_error("Simulation: the server reported request " + std::to_string(id) +
                           ", which is not in flight");
  }
  return slot(id);
}

void Simulation::deliver() {
  while (delivered_ < issued_ && slot(delivered_).done) {
    const InFlight& r = slot(delivered_);
    for (RequestObserver* observer : observers_)
      observer->on_request(delivered_, r.request, r.outcome);
    ++delivered_;
  }
}

void Simulation::schedule(SimTime at, Phase phase, std::uint32_t kind, std::uint64_t subject) {
  engine_.schedule_at(at, phase, kServerKinds + kind, subject);
}

void Simulation::started(std::uint64_t id, std::uint32_t unit, SimTime at) {
  RequestOutcome& o = in_flight(id).outcome;
  o.unit = unit;
  o.start = at;
}

void Simulation::first_token(std::uint64_t id, SimTime at) {
  RequestOutcome& o = in_flight(id).outcome;
  o.first_token_server = at;
  o.first_token = on_clock(at, network_.latency());
}

void Simulation::finished(std::uint64_t id, SimTime at, std::uint32_t preemptions,
                          std::uint64_t prefix_hit_tokens) {
  InFlight& r = in_flight(id);
  RequestOutcome& o = r.outcome;
  o.finish = at;
  o.response = on_clock(at, network_.transfer(r.request.result_bits));
  o.preemptions = preemptions;
  o.prefix_hit_tokens = static_cast<std::uint32_t>(prefix_hit_tokens);
  r.done = true;
  if (id == delivered_) deliver();
}

void Simulation::decoding(std::uint64_t id, std::uint32_t unit, SimTime transfer_end, SimTime at) {
  RequestOutcome& o = in_flight(id).outcome;
  o.handed_over = true;
  o.decode_unit = unit;
  o.transfer_end = transfer_end;
  o.decode_start = at;
}

void Simulation::rejected(std::uint64_t id, SimTime at) {
  InFlight& r = in_flight(id);
  RequestOutcome& o = r.outcome;
  o.rejected = true;
  o.start = o.finish = o.response = o.first_token = o.first_token_server = at;
  r.done = true;
  if (id == delivered_) deliver();
}

void Simulation::add_server_observer(ServerObserver& observer) {
  const unsigned reads = observer.reads();
  if (reads & ServerObserver::kBusy) busy_observers_.push_back(&observer);
  if (reads & ServerObserver::kSteps) {
    step_observers_.push_back(&observer);
  } else if (reads & ServerObserver::kBusy) {
    step_busy_observers_.push_back(&observer);
  }
  if (reads & ServerObserver::kTokenGaps) gap_observers_.push_back(&observer);
}

void Simulation::busy(std::uint32_t unit, SimTime from, SimTime to) {
  for (ServerObserver* observer : busy_observers_)
    observer->on_busy(unit, from, to);
}

void Simulation::stepped(const StepRecord& step) {
  for (ServerObserver* observer : step_observers_)
    observer->on_step(step);
  for (ServerObserver* observer : step_busy_observers_)
    observer->on_busy(step.replica, step.start, step.end);
}

void Simulation::token_gaps(std::span<const Duration> gaps) {
  for (ServerObserver* observer : gap_observers_)
    observer->on_token_gaps(gaps);
}

}  // namespace infersim
