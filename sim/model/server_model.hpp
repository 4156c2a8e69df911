// The seam between the simulation and a server model (the edge server of
// MODEL.md section 7, the batching server of BATCHING.md): the simulation hands
// the server each request as its device issues it; the server schedules its
// own events on the engine, says what happens to each request as it happens
// (start, first token, finish, or rejection) and what it did step by step, and
// at the end what it used (busy time, energy, its own figures), and how the
// reports should speak of it (describe). Nothing outside a model names a
// particular server; make_server (model/server_kinds.hpp) builds the one
// `server.kind` names.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/sim_time.hpp"
#include "engine/event.hpp"
#include "model/server_description.hpp"
#include "request/request.hpp"

namespace infersim {

// What a batching step did, told when it is scheduled (BATCHING.md section 5).
struct StepRecord {
  std::uint32_t replica = 0;
  SimTime start;
  SimTime end;
  std::uint32_t batch_requests = 0;    // entries of the batch
  std::uint64_t scheduled_tokens = 0;  // Σ n over the batch
  std::uint64_t prefill_tokens = 0;    // P
  std::uint64_t prefill_pairs = 0;     // Q
  std::uint32_t decode_requests = 0;   // D
  std::uint64_t decode_context = 0;    // A
  std::uint64_t expert_tokens = 0;     // tokens through its experts (model/step_cost.hpp)
  std::uint32_t expert_share = 1;      // replicas its experts are split among
  std::uint32_t running = 0;           // |running| right after the scheduling
  std::uint32_t waiting = 0;           // |waiting| (and pending, section 10) right after it
  std::uint32_t kv_blocks_used = 0;    // blocks with a count >= 1 right after it
  std::uint32_t kv_blocks = 0;         // K
  std::uint32_t preemptions = 0;       // preemptions made by this scheduling
  std::uint64_t admitted_tokens = 0;   // Σ num_tokens of the requests admitted by it
  std::uint64_t hit_tokens = 0;        // Σ hit of those admissions
};

// What a server tells the simulation. The simulation implements it: it turns
// the reports into each request's outcome (RequestOutcome) and passes the
// rest to whoever listens.
class ServerContext {
 public:
  virtual ~ServerContext() = default;
  virtual SimTime now() const = 0;
  // One of the server's own events: ServerModel::handle(kind, subject) is
  // called at `at`. Events at one instant run by phase, then first scheduled,
  // first run (engine/event.hpp). Throws CausalityError for a past instant.
  virtual void schedule(SimTime at, Phase phase, std::uint32_t kind, std::uint64_t subject) = 0;
  // Whether an event of a phase before `phase` is still to run at the current
  // instant (anything's, the server's own or another's). When none is, what
  // the server would do at (now, phase) it may do at once: nothing else can
  // happen before it.
  virtual bool pending_now_before(Phase phase) const = 0;
  // Whether requests are still to be issued (accept not yet called for all):
  // an autoscaler goes on evaluating while some are (BATCHING.md section 11).
  virtual bool requests_to_come() const = 0;

  // Request `id` first scheduled, on `unit` (a core, a replica), at `at`.
  virtual void started(std::uint64_t id, std::uint32_t unit, SimTime at) = 0;
  // Its first generated token leaves the server at `at` (for a request with
  // no generated token: at its finish).
  virtual void first_token(std::uint64_t id, SimTime at) = 0;
  // Its last token leaves the server at `at`: the request is done there.
  // `preemptions` and `prefix_hit_tokens` are the batching server's counts
  // (0 for the edge server).
  virtual void finished(std::uint64_t id, SimTime at, std::uint32_t preemptions,
                        std::uint64_t prefix_hit_tokens) = 0;
  // Disaggregated (BATCHING.md section 12): its KV, whose transfer ended at
  // `transfer_end`, admitted on decode replica `unit` at `at`. First time only.
  virtual void decoding(std::uint64_t /*id*/, std::uint32_t /*unit*/, SimTime /*transfer_end*/,
                        SimTime /*at*/) {}
  // Refused on reaching the server at `at` (BATCHING.md section 2): never
  // scheduled, no latency of its own.
  virtual void rejected(std::uint64_t id, SimTime at) = 0;
  // A replayed engine arrival taken at the turn `at`, not its own instant
  // (BATCHING.md section 10b): its TTFT against the run's counts from there.
  virtual void queued(std::uint64_t /*id*/, SimTime /*at*/) {}

  // `unit` was busy over [from, to) (a request on a core).
  virtual void busy(std::uint32_t unit, SimTime from, SimTime to) = 0;
  // A batching step, as it is scheduled: its replica busy over [start, end)
  // too, which a server that steps does not report apart.
  virtual void stepped(const StepRecord& step) = 0;
  // The gaps between consecutive token instants of requests, as the tokens
  // appear (inter-token latencies, BATCHING.md section 7).
  virtual void token_gaps(std::span<const Duration> gaps) = 0;
};

// A figure a server adds to the summary after OUTPUT.md's (BATCHING.md
// section 9); none = the figure does not exist (null).
struct ServerFigure {
  std::string key;
  std::optional<double> value;
  bool integer = false;
};

// One class of a fleet over a run (BATCHING.md section 11's `classes`).
struct ClassUsage {
  std::string name;
  std::string role;  // a disaggregated fleet's (section 12): "prefill" or "decode"; else empty
  double replica_hours = 0;
  double busy_s = 0;
  std::optional<double> utilization;  // busy over provisioned time; none when never provisioned
  double cost_usd = 0;                // price_per_gpu_hour x gpus x replica_hours
  std::int64_t gpus = 1;              // GPUs a replica
  double price_per_gpu_hour = 0;
  double gpu_hours = 0;  // gpus x replica_hours
};

// One replica slot of the batching server over a run, every life of it
// (BATCHING.md section 9's `replicas`).
struct ReplicaUsage {
  std::uint32_t replica = 0;
  std::string cls;                        // a fleet's class; else empty
  std::uint64_t routed = 0;               // requests its router sent it
  std::optional<double> prefix_hit_rate;  // Σ hit over Σ num_tokens of its admissions
  double busy_s = 0;
};

// A fleet replica's life (BATCHING.md section 11): provisioned over
// [from, to), active from `active_from` (none: it went before it served).
struct ReplicaSpan {
  std::uint32_t unit = 0;
  std::uint32_t cls = 0;
  SimTime from;
  std::optional<SimTime> active_from;
  SimTime to;
};

// What a server used over a run that ended at `end`.
struct ServerUsage {
  std::string unit;  // what it is made of: "core", "replica"
  std::uint32_t units = 0;
  Duration busy;  // Σ over its units of their busy time
  // `busy` is the sum of the requests' own execution times (the edge server:
  // a request has an execution time of its own, avg_exec_s exists).
  bool busy_is_requests_exec = false;
  double energy_wh = 0;  // the server's own energy from 0 to `end` (no radio)
  // The unit-time it had (a fleet's provisioned replica-time); none: `units`
  // for the whole run.
  std::optional<Duration> provisioned;
  // A fleet's: each unit's class by index, and each class's figures.
  std::vector<std::string> unit_class;
  std::vector<ClassUsage> classes;
  // The batching server's replicas, each slot over the run.
  std::vector<ReplicaUsage> replicas;
  // A fleet's replicas' lives, and each class's idle power (W a replica) and
  // price ($ a replica-hour).
  std::vector<ReplicaSpan> spans;
  std::vector<double> class_idle_w;
  std::vector<double> class_usd_per_hour;
  std::vector<ServerFigure> figures;
  // What refuses a request on arrival, in words ("" when nothing does): the
  // batching server's longest request and the knobs that set it.
  std::string rejection_limit;
};

class ServerModel {
 public:
  virtual ~ServerModel() = default;
  // Before the first request: where the server schedules and reports.
  virtual void attach(ServerContext& context) = 0;
  // Request `id` is issued now (ids in issue order, from 0) and reaches the
  // server at `server_arrival` (>= now). The server copies what it keeps of
  // `request` (its block ids stay valid for the run).
  virtual void accept(std::uint64_t id, const Request& request, SimTime server_arrival) = 0;
  // One of the events the server scheduled through the context.
  virtual void handle(std::uint32_t kind, std::uint64_t subject) = 0;
  // After the run (every request finished or rejected).
  virtual ServerUsage usage(SimTime end) const = 0;
  // What it is and has, in the words the reports use (model/server_description.hpp).
  virtual ServerDescription describe() const = 0;
  // The server's energy over a stretch of `length` in which its units were
  // busy `busy` in all (time series slices; MODEL.md section 8's server term).
  virtual double energy_wh(Duration length, Duration busy) const = 0;
};

}  // namespace infersim
