#include "model/simulation.hpp"

#include <algorithm>
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
    : requests_(&requests), fleet_(fleet), network_(network), server_(server) {
  for (std::size_t k = 1; k < requests_->size(); ++k) {
    if (requests_->arrival(k) < requests_->arrival(k - 1)) {
      throw std::logic_error("Simulation: requests are not in arrival order");
    }
  }
}

Simulation::Simulation(RequestList& requests, DeviceFleet& fleet, const NetworkPath& network,
                       ServerModel& server, ClosedLoop loop)
    : Simulation(requests, fleet, network, server) {
  loop_ = loop;
  if (closed()) closed_ = &requests;
  if (loop_.warmups > 0 && (!closed() || requests.empty())) {
    throw std::logic_error("Simulation: warm-ups need a closed loop and a request to copy");
  }
}

void Simulation::run() {
  ring_.assign(16, InFlight{});
  delivered_ = 0;
  issued_ = 0;
  in_flight_ = 0;
  warmups_back_ = 0;
  paced_ = ~std::uint64_t{0};
  measured_from_ = SimTime::zero();
  free_clients_.clear();
  clients_ = closed() ? loop_.clients(requests_->size()) : 0;
  if (clients_ > fleet_.size()) {
    throw std::logic_error("Simulation: a closed loop needs a device a client");
  }
  for (std::uint64_t c = 0; c < clients_; ++c)
    free_clients_.push_back(static_cast<std::uint32_t>(c));
  server_.attach(*this);
  if (closed()) {
    if (total() > 0) engine_.schedule_at(SimTime::zero(), Phase::kArrival, kIssue, 0);
  } else if (!requests_->empty()) {
    engine_.schedule_at(requests_->arrival(0), Phase::kArrival, kIssue, 0);
  }
  engine_.run([this](const Event& e) {
    if (e.kind == kIssue) {
      if (closed()) {
        paced_ = ~std::uint64_t{0};
        issue_ready();
      } else {
        issue(e.subject);
      }
    } else if (e.kind == kRelease) {
      release(e.subject);
    } else {
      server_.handle(e.kind - kServerKinds, e.subject);
    }
  });
  if (delivered_ != total()) {
    throw std::logic_error("Simulation: the server left request " + std::to_string(delivered_) +
                           " neither finished nor rejected");
  }
}

// MODEL.md section 4b: in id order, while a client is free; a measured request
// not before every warm-up's response is in, nor before its pacing instant.
void Simulation::issue_ready() {
  const SimTime now = engine_.now();
  while (issued_ < total() && in_flight_ < clients_) {
    const std::uint64_t id = issued_;
    if (id >= loop_.warmups) {
      if (warmups_back_ < loop_.warmups) return;
      const SimTime due =
          on_clock(measured_from_, requests_->arrival(id - loop_.warmups) - SimTime::zero());
      if (due > now) {
        if (paced_ != id) {
          engine_.schedule_at(due, Phase::kArrival, kIssue, id);
          paced_ = id;
        }
        return;
      }
    }
    issue(id);
  }
}

void Simulation::release(std::uint64_t subject) {
  --in_flight_;
  free_clients_.push_back(static_cast<std::uint32_t>(subject));
  if ((subject >> 32) != 0 && ++warmups_back_ == loop_.warmups) measured_from_ = engine_.now();
  issue_ready();
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
  r.request = request_of(k);
  RequestOutcome& o = r.outcome;
  if (closed()) {
    // Sent now by the client that freed first; the list keeps the instant.
    r.request.arrival = engine_.now();
    if (k >= loop_.warmups) closed_->set_arrival(k - loop_.warmups, engine_.now());
    o.device = free_clients_.front();
    free_clients_.pop_front();
    ++in_flight_;
  } else {
    o.device = fleet_.issue(k);
  }
  o.server_arrival = on_clock(r.request.arrival, network_.transfer(r.request.request_bits));
  o.queued = o.server_arrival;
  server_.accept(k, r.request, o.server_arrival);
  if (!closed() && k + 1 < requests_->size())
    engine_.schedule_at(requests_->arrival(k + 1), Phase::kArrival, kIssue, k + 1);
}

// Closed loop: the client of `r` is free once its response is back, in the
// arrival phase of that instant (or at once, when a later phase of it is on).
void Simulation::respond(const InFlight& r, std::uint64_t id) {
  if (!closed()) return;
  const SimTime at = std::max(r.outcome.response, engine_.now());
  const std::uint64_t warm = id < loop_.warmups ? 1 : 0;
  engine_.schedule_at(at, Phase::kArrival, kRelease, (warm << 32) | r.outcome.device);
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
    if (delivered_ >= loop_.warmups) {
      for (RequestObserver* observer : observers_)
        observer->on_request(delivered_ - loop_.warmups, r.request, r.outcome);
    }
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
  respond(r, id);
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
  respond(r, id);
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
  if (warming_up()) return;
  for (ServerObserver* observer : busy_observers_)
    observer->on_busy(unit, from, to);
}

void Simulation::stepped(const StepRecord& step) {
  if (warming_up()) return;
  for (ServerObserver* observer : step_observers_)
    observer->on_step(step);
  for (ServerObserver* observer : step_busy_observers_)
    observer->on_busy(step.replica, step.start, step.end);
}

void Simulation::token_gaps(std::span<const Duration> gaps) {
  if (warming_up()) return;
  for (ServerObserver* observer : gap_observers_)
    observer->on_token_gaps(gaps);
}

}  // namespace infersim
