// A ServerContext over the event engine for tests: feeds requests to a
// ServerModel (each accepted at its arrival, in id order, with a given server
// arrival), runs the server's events and records every report, so a test can
// assert each request's start, first token and finish to the nanosecond, the
// rejections, the steps and the token gaps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "engine/engine.hpp"
#include "model/server_model.hpp"
#include "request/request.hpp"

namespace infersim::test {

// A request as fed: what the server is given and when it reaches it.
struct FedRequest {
  Request request;
  SimTime server_arrival;
};

// A request with `context` and `generated` tokens, issued at `arrival_ns`,
// reaching the server `up_ns` later; block ids (kept alive by the caller).
inline FedRequest fed(std::int64_t arrival_ns, double context, double generated,
                      std::span<const std::uint32_t> block_ids = {},
                      std::uint32_t block_id_tokens = 0, std::int64_t up_ns = 0) {
  FedRequest f;
  f.request.arrival = SimTime::ns(arrival_ns);
  f.request.context_tokens = context;
  f.request.generated_tokens = generated;
  f.request.block_ids = block_ids;
  f.request.block_id_tokens = block_ids.empty() ? 0 : block_id_tokens;
  f.server_arrival = SimTime::ns(arrival_ns + up_ns);
  return f;
}

// What the server said about one request.
struct RequestReport {
  std::optional<SimTime> start;
  std::uint32_t unit = 0;
  std::optional<SimTime> first_token;
  std::optional<SimTime> finish;
  std::optional<SimTime> rejected;
  std::uint32_t preemptions = 0;
  std::uint64_t prefix_hit_tokens = 0;
  // Disaggregated (BATCHING.md section 12): its KV transfer's end, its first
  // admission on a decode replica, and that replica.
  std::optional<SimTime> transfer_end;
  std::optional<SimTime> decode_start;
  std::uint32_t decode_unit = 0;
  // Taken at a turn other than its arrival (BATCHING.md section 10b).
  std::optional<SimTime> queued;
};

struct BusyReport {
  std::uint32_t unit = 0;
  SimTime from;
  SimTime to;
};

class ServerHarness final : public ServerContext {
 public:
  explicit ServerHarness(ServerModel& server) : server_(server) { server_.attach(*this); }

  // Runs `requests` (non-decreasing arrivals; id = index) until no event is
  // left. Reports of a request given twice, or out of order, throw.
  void run(const std::vector<FedRequest>& requests) {
    reports.assign(requests.size(), RequestReport{});
    to_issue_ = requests.size();
    if (!requests.empty()) {
      engine_.schedule_at(requests[0].request.arrival, Phase::kArrival, kIssue, 0);
    }
    engine_.run([&](const Event& e) {
      if (e.kind != kIssue) {
        server_.handle(e.kind, e.subject);
        return;
      }
      const FedRequest& f = requests[e.subject];
      --to_issue_;
      server_.accept(e.subject, f.request, f.server_arrival);
      if (e.subject + 1 < requests.size()) {
        engine_.schedule_at(requests[e.subject + 1].request.arrival, Phase::kArrival, kIssue,
                            e.subject + 1);
      }
    });
    end = engine_.now();
  }

  SimTime now() const override { return engine_.now(); }
  void schedule(SimTime at, Phase phase, std::uint32_t kind, std::uint64_t subject) override {
    if (kind == kIssue) throw std::logic_error("a server event of the harness's own kind");
    engine_.schedule_at(at, phase, kind, subject);
  }
  bool requests_to_come() const override { return to_issue_ > 0; }
  bool pending_now_before(Phase phase) const override {
    const EventKey* next = engine_.next_key();
    return next != nullptr && next->time == engine_.now() && next->phase() < phase;
  }
  void started(std::uint64_t id, std::uint32_t unit, SimTime at) override {
    RequestReport& r = report(id);
    if (r.start) throw std::logic_error("started twice");
    r.start = at;
    r.unit = unit;
  }
  void first_token(std::uint64_t id, SimTime at) override {
    RequestReport& r = report(id);
    if (r.first_token || !r.start) throw std::logic_error("first token twice or before start");
    r.first_token = at;
  }
  void finished(std::uint64_t id, SimTime at, std::uint32_t preemptions,
                std::uint64_t prefix_hit_tokens) override {
    RequestReport& r = report(id);
    if (r.finish || !r.first_token) throw std::logic_error("finished twice or before a token");
    r.finish = at;
    r.preemptions = preemptions;
    r.prefix_hit_tokens = prefix_hit_tokens;
    finish_order.push_back(id);
  }
  void decoding(std::uint64_t id, std::uint32_t unit, SimTime transfer_end, SimTime at) override {
    RequestReport& r = report(id);
    if (r.decode_start || !r.first_token || r.finish || transfer_end > at) {
      throw std::logic_error(
          "decoding twice, before its first token, after its finish or "
          "before its transfer's end");
    }
    r.transfer_end = transfer_end;
    r.decode_start = at;
    r.decode_unit = unit;
  }
  void queued(std::uint64_t id, SimTime at) override {
    RequestReport& r = report(id);
    if (r.queued || r.start) throw std::logic_error("queued twice or after start");
    r.queued = at;
  }
  void rejected(std::uint64_t id, SimTime at) override {
    RequestReport& r = report(id);
    if (r.rejected || r.start) throw std::logic_error("rejected twice or after start");
    r.rejected = at;
  }
  void busy(std::uint32_t unit, SimTime from, SimTime to) override {
    busy_periods.push_back({unit, from, to});
  }
  // A step is its replica's busy time too (ServerContext::stepped).
  void stepped(const StepRecord& step) override {
    steps.push_back(step);
    busy_periods.push_back({step.replica, step.start, step.end});
  }
  void token_gaps(std::span<const Duration> g) override {
    gaps.insert(gaps.end(), g.begin(), g.end());
  }

  std::vector<RequestReport> reports;  // by id
  std::vector<StepRecord> steps;
  std::vector<Duration> gaps;
  std::vector<BusyReport> busy_periods;
  std::vector<std::uint64_t> finish_order;  // ids as their finish was told
  SimTime end;                              // the last event's instant

 private:
  static constexpr std::uint32_t kIssue = ~std::uint32_t{0};
  RequestReport& report(std::uint64_t id) {
    if (id >= reports.size()) throw std::logic_error("report of an unknown request");
    return reports[id];
  }

  ServerModel& server_;
  std::size_t to_issue_ = 0;
  Engine<> engine_;
};

}  // namespace infersim::test
