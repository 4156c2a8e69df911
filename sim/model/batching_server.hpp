// The batching server (BATCHING.md): replicas of an LLM inference engine,
// each batching at the iteration level over a paged KV cache with prefix
// caching (ReplicaScheduler), behind a router (model/router.hpp) that sees
// the active replicas; with async scheduling and lockstep replicas as section
// 10 says, and a fleet of replica classes that autoscale (each asking its
// scaling rule, model/scaling_rule.hpp, how many replicas it wants) and cost
// money as section 11 says, whose classes may split prefill and decode as
// section 12 says. Its own events: a request reaching the server (arrival
// phase), the end of the steps at an instant (departure phase, replicas in
// index order), a KV transfer's end (transfer phase, after the departures),
// one scheduling pass an instant (schedule phase, after everything else
// then), a started replica becoming active (activate phase, first) and the
// autoscaler's evaluations (evaluate phase, last).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/batching_knobs.hpp"
#include "model/replica_class.hpp"
#include "model/replica_scheduler.hpp"
#include "model/router.hpp"
#include "model/scaling_rule.hpp"
#include "model/server_model.hpp"
#include "model/step_cost.hpp"

namespace infersim {

namespace test {
struct ServerInspector;
}

class BatchingServer final : public ServerModel {
 public:
  // `knobs` passed check_batching_knobs (with the requests' block size): the
  // fleet-wide knobs (block size, prefix caching, admission, router, async
  // scheduling, lockstep, max_model_len). Without `fleet`, one class of
  // `knobs.replicas` replicas with `knobs`, never scaled, and the outputs of
  // version 1; with it, the classes in order (each checked).
  explicit BatchingServer(const BatchingKnobs& knobs, std::vector<ReplicaClass> fleet = {});
  // The replicas refer to the server's slots: it stays where it was made.
  BatchingServer(const BatchingServer&) = delete;
  BatchingServer& operator=(const BatchingServer&) = delete;

  void attach(ServerContext& context) override;
  void accept(std::uint64_t id, const Request& request, SimTime server_arrival) override;
  void handle(std::uint32_t kind, std::uint64_t subject) override;
  ServerUsage usage(SimTime end) const override;
  ServerDescription describe() const override;
  double energy_wh(Duration length, Duration busy) const override;

  // The tests look at the replicas and the slots in flight
  // (tests/unit/inspectors.hpp).
  friend struct test::ServerInspector;

 private:
  enum Kind : std::uint32_t {
    kArrive = 0,
    kStepEnd = 1,
    kSchedulePass = 2,
    kActivate = 3,
    kEvaluate = 4,
    kTransferEnd = 5
  };
  enum class State : std::uint8_t { kAbsent, kStarting, kActive, kDraining };
  // One replica slot: the replica in it now (none while absent or starting).
  struct Replica {
    std::uint32_t cls = 0;
    State state = State::kAbsent;
    std::uint32_t generation = 0;  // bumped at each start, so a stale activation is ignored
    SimTime since;                 // provisioned from (its start)
    std::optional<SimTime> active_from;
    std::unique_ptr<ReplicaScheduler> scheduler;
  };
  // What replicas that went absent leave behind, per class and in all.
  struct ClassTotals {
    Duration provisioned;
    Duration busy;
    double energy_wh = 0;
  };

  void arrive(std::uint32_t slot);
  // Into `replica`'s waiting (or pending, section 10), with a pass if it is idle.
  void join(ReplicaScheduler& replica, std::uint32_t slot);
  // Section 10b: an arrival that is the engine's own turn, taken at the nearer
  // end of the step running then (the round, with lockstep).
  void take_at_turn(ReplicaScheduler& replica, std::uint32_t slot);
  // The routers that refresh (section 8's vllm-dp) take the replicas' state
  // as it stood at their latest refresh instant; refresh_at_ becomes the
  // earliest next one.
  void refresh_routers();
  // `router`'s refresh when one of its instants has come since `at` (its
  // next), over `view`; `at` moves to the next.
  void refresh_router(Router& router, std::span<ReplicaScheduler* const> view, SimTime& at);
  // Section 12: a handed-over request queues on its prefill replica's link;
  // at the transfer's end it goes to a decode replica.
  void queue_transfer(std::uint32_t replica, std::uint32_t slot, SimTime now);
  void end_transfer(std::uint32_t slot, std::uint32_t replica);
  // Holds no request (waiting, running, pending) and no transfer: a draining
  // replica may go.
  bool holds_nothing(std::uint32_t replica) const {
    return replicas_[replica].scheduler->requests() == 0 && links_[replica].queued == 0;
  }
  // Every step ending now, in replica order; `replica` is the event's.
  void end_steps(std::uint32_t replica);
  void end_step(std::uint32_t replica, SimTime now);  // its step ends now
  void schedule_pass();
  void request_pass();
  void release_slot(std::uint32_t slot);
  bool any_stepping() const { return stepping_ > 0; }
  bool idle(std::uint32_t replica) const { return step_end_[replica] == kIdle; }
  void begin_step(std::uint32_t replica, SimTime start, SimTime end);
  bool steps(std::uint32_t replica) const {
    const State s = replicas_[replica].state;
    return s == State::kActive || s == State::kDraining;
  }

  // Section 11: the fleet's replicas coming and going.
  // The settings key of a class's autoscale knob, for an error naming it.
  std::string autoscale_key(std::uint32_t cls, const char* key) const;
  void start_replica(std::uint32_t slot, SimTime now);
  void activate(std::uint32_t slot, std::uint32_t generation);
  void make_absent(std::uint32_t slot, SimTime now);
  std::unique_ptr<ReplicaScheduler> make_scheduler(std::uint32_t index, const ReplicaClass& cls);
  void rebuild_active();
  // Each class due now: its rule observes it and says how many replicas it
  // wants; scale starts or lets go the difference.
  void evaluate();
  ScalingObservation observe(std::uint32_t cls) const;
  void scale(std::uint32_t cls, std::int64_t desired, std::int64_t current);
  void schedule_evaluation(SimTime after);
  std::uint32_t provisioned_count() const;

  BatchingKnobs knobs_;
  std::vector<ReplicaClass> classes_;
  bool fleet_ = false;           // a fleet was given: section 11's outputs
  std::vector<StepCost> costs_;  // a class's
  std::int64_t model_len_;
  ServerContext* context_ = nullptr;
  std::vector<BatchedRequest> requests_;  // slots of the requests in flight
  std::vector<std::uint32_t> free_slots_;
  std::vector<Replica> replicas_;          // every class's slots, in index order
  std::vector<ReplicaScheduler*> active_;  // the active ones, in index order (prefill ones)
  std::unique_ptr<Router> router_;         // over active_ (model/router_kinds.hpp's table)
  // Section 12: the active decode replicas and their router (none unless
  // disaggregated), each replica's link (the end of its last transfer, and
  // how many are queued or running).
  bool disaggregated_ = false;
  std::vector<ReplicaScheduler*> decode_active_;
  std::unique_ptr<Router> decode_router_;
  struct Link {
    SimTime end = SimTime::zero();
    std::uint32_t queued = 0;
  };
  std::vector<Link> links_;
  std::int64_t link_latency_ns_ = 0;
  std::vector<std::uint32_t> handed_;
  std::vector<Duration> transfers_;     // each transfer's end - first token
  std::vector<Duration> decode_waits_;  // each first decode admission - transfer end
  double kv_bytes_ = 0;                 // Σ p * kv_bytes_per_token
  // A replica formed an empty batch with work in hand (a prefill replica
  // whose held blocks stop its front request): it tries again at the next
  // instant of the run (section 13.7). The last instant a pass ran.
  bool stalled_ = false;
  SimTime passed_at_ = SimTime::ns(-1);
  // The instant of the event in hand: handle() sets it, and everything that
  // reads the clock runs within handle() (a call to the context a read cost a
  // good part of a step's small work).
  SimTime now_ = SimTime::zero();
  std::uint32_t stepping_ = 0;  // replicas stepping now
  // Each replica's step end, kIdle when it is not stepping: side by side, for
  // the scans at every step end and scheduling pass.
  static constexpr SimTime kIdle = SimTime::ns(-1);
  std::vector<SimTime> step_end_;
  std::vector<SimTime> step_start_;
  // The routers' next refresh instants, and the earlier of them (section 8).
  SimTime refresh_at_ = SimTime::zero();
  SimTime router_refresh_at_ = SimTime::zero(), decode_refresh_at_ = SimTime::zero();
  bool refreshes_ = false;  // a router refreshes
  // Section 8's precise prefix index with a delay: each replica's KV events,
  // gathered as they happen; stamped with their instant and held until they
  // reach the routers, kv_delay_ later (none: no router takes them).
  std::optional<Duration> kv_delay_;
  std::vector<std::vector<KvEvent>> kv_events_;  // by slot, not yet stamped
  struct TimedKvEvent {
    SimTime reaches;
    std::uint32_t replica;
    KvEvent event;
  };
  std::deque<TimedKvEvent> kv_pending_;
  // The events of this instant stamped; those whose instant to reach the
  // routers has come handed to them.
  void stamp_kv_events();
  void deliver_kv_events();
  // `router`'s pick for `r` among `view`, the router's expected hit kept on r.
  std::uint32_t route(Router& router, BatchedRequest& r, std::span<ReplicaScheduler* const> view);
  // Section 9's router figures: the hits the router expected against those
  // found at the requests' first admission; the in-flight imbalance over the
  // router's replicas (max over mean) integrated over the time the mean is
  // above 0, and the state it stands at since imbalance_at_.
  std::uint64_t hit_predicted_ = 0, hit_actual_ = 0, hit_compared_ = 0;
  double imbalance_integral_ = 0, imbalance_time_ = 0, imbalance_now_ = 0;
  SimTime imbalance_at_ = SimTime::zero();
  bool imbalance_moved_ = false;  // imbalance_now_ is to be worked out again
  void take_imbalance();
  void work_out_imbalance();  // imbalance_now_ from the state now
  // The replicas that may be idle with work, a bit each: marked whenever one
  // may become so (its step ends, a request joins it, its held blocks come
  // free, it becomes active), unmarked when a scan finds it is not. A scan for
  // the replicas to schedule reads the marked ones alone, in index order,
  // where reading every replica at every step end cost more than the step.
  std::vector<std::uint64_t> ready_;
  void mark(std::uint32_t replica) { ready_[replica >> 6] |= std::uint64_t{1} << (replica & 63); }
  // Idle with work, it may step now: every unmarked replica is not.
  bool ready(std::uint32_t replica) const {
    return idle(replica) && steps(replica) && replicas_[replica].scheduler->has_work();
  }
  // Calls visit(i) for each marked replica i in index order, unmarking those
  // not ready; visit returns false to stop.
  template <class Visit>
  void for_each_ready(Visit visit);
  // The instants whose step ends were completed and whose pass is scheduled
  // (-1: none), so each happens once an instant.
  SimTime ends_done_at_ = SimTime::ns(-1);
  SimTime pass_at_ = SimTime::ns(-1);
  std::vector<Duration> gaps_;
  std::vector<std::uint32_t> finished_;
  std::vector<StepRecord> planned_;  // lockstep: the batches of one pass

  // Autoscaling: each class's scaling rule (none: it does not scale) and its
  // next evaluation.
  std::vector<std::unique_ptr<ScalingRule>> rules_;
  std::vector<SimTime> next_evaluation_;
  SimTime evaluation_at_ = SimTime::ns(-1);  // the evaluation event scheduled

  std::vector<ClassTotals> gone_;   // per class, of replicas gone absent
  std::vector<ReplicaSpan> spans_;  // of replicas gone absent (a fleet's)
  std::uint64_t gone_preemptions_ = 0, gone_evicted_ = 0, gone_admissions_ = 0;
  std::uint64_t gone_tokens_ = 0, gone_hits_ = 0;
  // By slot, over its lives: requests routed to it, and what its lives that
  // went left (admitted tokens, their hits, busy time).
  struct SlotTotals {
    std::uint64_t routed = 0, tokens = 0, hits = 0;
    Duration busy;
  };
  std::vector<SlotTotals> slot_totals_;
  double gone_kv_peak_ = 0;  // the largest peak share of K among them
  std::uint32_t peak_provisioned_ = 0;
  std::uint64_t scale_ups_ = 0, scale_downs_ = 0;
  double served_tokens_ = 0;  // Σ (p + o) over finished requests

  std::uint64_t rejected_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t batched_requests_ = 0;  // Σ batch sizes
};

}  // namespace infersim
