#include "model/batching_server.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/input_error.hpp"
#include "core/percentiles.hpp"
#include "model/prefix_index.hpp"
#include "model/replica_power.hpp"
#include "model/router_kinds.hpp"

namespace infersim {
namespace {

[[noreturn, gnu::cold, gnu::noinline]] void past_the_clock(SimTime at, Duration d,
                                                           const std::string& keys) {
  throw InputError("", 0, keys,
                   "the run reaches past the end of the nanosecond clock (2^63 ns, about 292 "
                   "years) at " +
                       std::to_string(at.count_ns()) + " ns plus " + std::to_string(d.count_ns()) +
                       " ns: a shorter duration or trace");
}

// at + d, or an InputError naming the keys `keys()` gives when the sum would
// pass the end of the nanosecond clock (2^63 - 1 ns, about 292 years;
// BATCHING.md section 13.1): each duration is bounded, a run's length is not.
template <typename Keys>
SimTime on_clock(SimTime at, Duration d, const Keys& keys) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(at.count_ns(), d.count_ns(), &sum)) past_the_clock(at, d, keys());
  return SimTime::ns(sum);
}

// "batching.step_base_s, ...": the step terms' keys.
std::string step_cost_keys() {
  std::string keys;
  for (const char* key : kStepTermKeys)
    keys += (keys.empty() ? "batching." : ", batching.") + std::string(key);
  return keys;
}

[[noreturn, gnu::cold, gnu::noinline]] void step_too_long(const StepWork& w, double seconds) {
  char text[320];
  std::snprintf(text, sizeof(text),
                "a step of %llu prefill tokens and %llu decodes would take %.3g s, more than the "
                "1e9 s a duration may last on the nanosecond clock (BATCHING.md section 13.1): "
                "smaller step costs",
                static_cast<unsigned long long>(w.prefill_tokens),
                static_cast<unsigned long long>(w.decode_requests), seconds);
  throw InputError("", 0, step_cost_keys(), text);
}

// The end of a step of `work` begun at `now`: StepCost::duration, refused
// naming the step costs when it would be longer than a duration may be or
// end past the clock.
SimTime step_end(SimTime now, const StepCost& cost, const StepWork& work) {
  const double seconds = cost.seconds(work);
  if (!(seconds <= kLongestDurationS)) [[unlikely]]
    step_too_long(work, seconds);
  return on_clock(now, Duration::ns(std::max<std::int64_t>(1, seconds_to_ns(seconds))),
                  [] { return step_cost_keys(); });
}

}  // namespace

BatchingServer::BatchingServer(const BatchingKnobs& knobs, std::vector<ReplicaClass> fleet)
    : knobs_(knobs),
      classes_(std::move(fleet)),
      fleet_(!classes_.empty()),
      model_len_(knobs.model_len()),
      router_(make_router(knobs.router, knobs)),
      link_latency_ns_(std::llround(knobs.kv_link_latency_s * 1e9)) {
  if (!fleet_) {
    ReplicaClass only;
    only.replicas = knobs.replicas;
    only.knobs = knobs;
    classes_.push_back(std::move(only));
  }
  std::uint32_t count = 0;
  for (const ReplicaClass& c : classes_) {
    costs_.push_back(StepCost::of(c.knobs));
    count += static_cast<std::uint32_t>(c.slots());
    disaggregated_ = disaggregated_ || c.role != Role::kBoth;
  }
  replicas_.resize(count);
  slot_totals_.resize(count);
  links_.resize(count);
  step_end_.assign(count, kIdle);
  step_start_.assign(count, kIdle);
  ready_.assign((count + 63) / 64, 0);
  gone_.resize(classes_.size());
  rules_.resize(classes_.size());
  next_evaluation_.assign(classes_.size(), SimTime::ns(-1));
  if (disaggregated_) decode_router_ = make_router(knobs.decode_router, knobs);
  // The routers that take the replicas' KV events (both read the same knob).
  kv_delay_ = router_->kv_event_delay();
  if (!kv_delay_ && decode_router_) kv_delay_ = decode_router_->kv_event_delay();
  if (kv_delay_) kv_events_.resize(count);
  std::uint32_t index = 0;
  for (std::uint32_t c = 0; c < classes_.size(); ++c) {
    const ReplicaClass& cls = classes_[c];
    for (std::int64_t s = 0; s < cls.slots(); ++s, ++index) {
      Replica& r = replicas_[index];
      r.cls = c;
      if (s < cls.replicas) {
        r.state = State::kActive;
        r.since = SimTime::zero();
        r.active_from = SimTime::zero();
        r.scheduler = make_scheduler(index, cls);
      }
    }
    if (cls.autoscale) {
      rules_[c] = make_scaling_rule(*cls.autoscale);
      next_evaluation_[c] = SimTime::zero() + rules_[c]->interval();
    }
  }
  rebuild_active();
  peak_provisioned_ = provisioned_count();
  refreshes_ = router_->refresh_period() || (decode_router_ && decode_router_->refresh_period());
}

void BatchingServer::attach(ServerContext& context) {
  context_ = &context;
  schedule_evaluation(SimTime::ns(-1));
}

std::unique_ptr<ReplicaScheduler> BatchingServer::make_scheduler(std::uint32_t index,
                                                                 const ReplicaClass& cls) {
  auto scheduler = std::make_unique<ReplicaScheduler>(index, cls.knobs, requests_, cls.role);
  scheduler->set_step_cost(&costs_[static_cast<std::size_t>(&cls - classes_.data())]);
  if (kv_delay_) scheduler->record_kv_events(&kv_events_[index]);
  if (cls.role == Role::kDecode) scheduler->set_decode_waits(&decode_waits_);
  return scheduler;
}

void BatchingServer::rebuild_active() {
  imbalance_moved_ = true;
  active_.clear();
  decode_active_.clear();
  for (Replica& r : replicas_) {
    if (r.state != State::kActive) continue;
    if (classes_[r.cls].role == Role::kDecode) {
      decode_active_.push_back(r.scheduler.get());
    } else {
      active_.push_back(r.scheduler.get());
    }
  }
}

std::uint32_t BatchingServer::provisioned_count() const {
  std::uint32_t n = 0;
  for (const Replica& r : replicas_)
    n += r.state != State::kAbsent;
  return n;
}

template <class Visit>
void BatchingServer::for_each_ready(Visit visit) {
  for (std::size_t w = 0; w < ready_.size(); ++w) {
    for (std::uint64_t bits = ready_[w]; bits != 0; bits &= bits - 1) {
      const auto bit = static_cast<unsigned>(std::countr_zero(bits));
      const auto i = static_cast<std::uint32_t>(w * 64 + bit);
      if (!ready(i)) {
        ready_[w] &= ~(std::uint64_t{1} << bit);
        continue;
      }
      if (!visit(i)) return;
    }
  }
}

void BatchingServer::begin_step(std::uint32_t replica, SimTime start, SimTime end) {
  step_end_[replica] = end;
  step_start_[replica] = start;
  replicas_[replica].scheduler->add_busy(start, end);
  ++stepping_;
}

void BatchingServer::accept(std::uint64_t id, const Request& request, SimTime server_arrival) {
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(requests_.size());
    requests_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  BatchedRequest& r = requests_[slot];
  r.id = id;
  // p = max(1, llround(c)), o = llround(g) (section 2). Sizes llround cannot
  // hold are far above any L: such a request is rejected on arrival.
  constexpr double kHuge = 1e18;
  const double c = request.context_tokens;
  const double g = request.generated_tokens;
  if (c < kHuge && g < kHuge) {
    r.prompt = std::max<std::int64_t>(1, std::llround(c));
    r.output = std::max<std::int64_t>(0, std::llround(g));
  } else {
    r.prompt = model_len_ + 1;
    r.output = 0;
  }
  r.num_tokens = r.prompt;
  r.computed = 0;
  r.out = 0;
  r.scheduled = 0;
  r.blocks.clear();
  r.registered = 0;
  r.anonymous.clear();
  r.anonymous_seen = 0;
  r.hit_tokens = 0;
  r.preemptions = 0;
  r.predicted_hit = -1;
  r.first_hit = -1;
  r.started = false;
  r.has_token = false;
  r.prompt_blocks = PromptBlocks();
  if (r.prompt + r.output <= model_len_ && !request.block_ids.empty() &&
      request.block_id_tokens != 0) {
    if (request.block_id_tokens % knobs_.block_tokens != 0) {
      throw std::invalid_argument("batching.block_tokens " + std::to_string(knobs_.block_tokens) +
                                  " does not divide a request's block size of " +
                                  std::to_string(request.block_id_tokens) + " tokens");
    }
    r.prompt_blocks =
        PromptBlocks(request.block_ids, request.block_id_tokens, r.prompt, knobs_.block_tokens);
  }
  context_->schedule(server_arrival, Phase::kArrival, kArrive, slot);
}

void BatchingServer::handle(std::uint32_t kind, std::uint64_t subject) {
  now_ = context_->now();
  if (now_ != imbalance_at_) take_imbalance();
  // The routers' counts of a refresh instant are those before any event at
  // or after it changes them (section 8).
  if (refreshes_ && now_ >= refresh_at_) refresh_routers();
  // A replica that formed an empty batch tries again at (3) of the next
  // instant of the run (section 13.7): before an evaluation due now, after
  // anything else.
  if (stalled_ && kind == kEvaluate && passed_at_ != now_) schedule_pass();
  switch (kind) {
    case kArrive:
      arrive(static_cast<std::uint32_t>(subject));
      break;
    case kStepEnd:
      end_steps(static_cast<std::uint32_t>(subject));
      break;
    case kSchedulePass:
      schedule_pass();
      break;
    case kActivate:
      activate(static_cast<std::uint32_t>(subject), static_cast<std::uint32_t>(subject >> 32));
      break;
    case kEvaluate:
      evaluate();
      break;
    case kTransferEnd:
      end_transfer(static_cast<std::uint32_t>(subject), static_cast<std::uint32_t>(subject >> 32));
      break;
    default:
      throw std::logic_error("batching server: unknown event kind " + std::to_string(kind));
  }
  if (stalled_ && kind != kEvaluate && kind != kSchedulePass && kind != kActivate) request_pass();
  if (kv_delay_) stamp_kv_events();
  if (imbalance_moved_) work_out_imbalance();
}

void BatchingServer::release_slot(std::uint32_t slot) {
  const BatchedRequest& r = requests_[slot];
  if (r.predicted_hit >= 0 && r.first_hit >= 0) {
    hit_predicted_ += static_cast<std::uint64_t>(r.predicted_hit);
    hit_actual_ += static_cast<std::uint64_t>(r.first_hit);
    ++hit_compared_;
  }
  free_slots_.push_back(slot);
}

std::uint32_t BatchingServer::route(Router& router, BatchedRequest& r,
                                    std::span<ReplicaScheduler* const> view) {
  if (kv_delay_) {
    stamp_kv_events();
    deliver_kv_events();
  }
  const std::uint32_t pick = router.route(r, view);
  // The prefill side's expectation is the one compared (section 13.8's hits).
  if (&router == router_.get()) r.predicted_hit = router.predicted_hit_tokens().value_or(-1);
  ++slot_totals_[view[pick]->index()].routed;
  return pick;
}

void BatchingServer::stamp_kv_events() {
  for (std::uint32_t i = 0; i < kv_events_.size(); ++i) {
    for (const KvEvent& e : kv_events_[i])
      kv_pending_.push_back({now_ + *kv_delay_, i, e});
    kv_events_[i].clear();
  }
}

void BatchingServer::deliver_kv_events() {
  while (!kv_pending_.empty() && kv_pending_.front().reaches <= now_) {
    // A router that takes no events ignores them (Router::kv_event).
    const TimedKvEvent& e = kv_pending_.front();
    router_->kv_event(e.replica, e.event);
    if (decode_router_) decode_router_->kv_event(e.replica, e.event);
    kv_pending_.pop_front();
  }
}

void BatchingServer::work_out_imbalance() {
  // Max over mean of the requests in flight on the router's replicas (0 when
  // none is). Only a request joining or leaving a replica, or the active
  // replicas changing, moves it: a step that ends with neither leaves it.
  imbalance_moved_ = false;
  std::uint64_t most = 0, all = 0;
  for (const ReplicaScheduler* s : active_) {
    most = std::max(most, s->requests());
    all += s->requests();
  }
  imbalance_now_ = all == 0 ? 0
                            : static_cast<double>(most) * static_cast<double>(active_.size()) /
                                  static_cast<double>(all);
}

void BatchingServer::take_imbalance() {
  // The state since imbalance_at_ held until now.
  const double held = (now_ - imbalance_at_).seconds();
  if (imbalance_now_ > 0) {
    imbalance_integral_ += held * imbalance_now_;
    imbalance_time_ += held;
  }
  imbalance_at_ = now_;
}

void BatchingServer::request_pass() {
  const SimTime now = now_;
  // One pass an instant: scheduled, or run already.
  if (pass_at_ == now || passed_at_ == now) return;
  // The pass comes after every step end and arrival of the instant (section
  // 6); when none is left to run, it runs now, an event saved a step.
  if (!context_->pending_now_before(Phase::kSchedule)) {
    schedule_pass();
    return;
  }
  pass_at_ = now;
  context_->schedule(now, Phase::kSchedule, kSchedulePass, 0);
}

void BatchingServer::arrive(std::uint32_t slot) {
  const BatchedRequest& r = requests_[slot];
  if (r.prompt + r.output > model_len_) {
    ++rejected_;
    context_->rejected(r.id, now_);
    release_slot(slot);
    return;
  }
  ReplicaScheduler& replica = *active_[route(*router_, requests_[slot], active_)];
  imbalance_moved_ = true;  // it joins the replica, now or at a turn, pending or not
  if (knobs_.engine_turn_arrivals) {
    take_at_turn(replica, slot);
  } else {
    join(replica, slot);
  }
}

void BatchingServer::join(ReplicaScheduler& replica, std::uint32_t slot) {
  mark(replica.index());
  imbalance_moved_ = true;
  // With lockstep a replica may schedule only when none steps.
  const bool busy = knobs_.lockstep ? any_stepping() : !idle(replica.index());
  if (busy && knobs_.async_scheduling) {
    replica.enqueue_pending(slot);
  } else {
    replica.enqueue(slot);
    if (!busy) request_pass();
  }
}

void BatchingServer::take_at_turn(ReplicaScheduler& replica, std::uint32_t slot) {
  const std::uint32_t i = replica.index();
  // The step running: the replica's own, or with lockstep the round's, which
  // every stepping replica shares.
  std::uint32_t k = i;
  if (knobs_.lockstep && any_stepping()) {
    k = 0;
    while (idle(k))
      ++k;
  }
  if (idle(k)) {
    join(replica, slot);
    return;
  }
  // Strictly inside the step: steps end before arrivals of their instant and
  // form after them.
  const SimTime start = step_start_[k];
  const SimTime end = step_end_[k];
  if (knobs_.async_scheduling && now_ - start <= end - now_) {
    // Taken as the step began: planned into the step after it.
    mark(i);
    replica.enqueue_pending(slot, 1);
    context_->queued(requests_[slot].id, start);
  } else {
    // Taken as it ends: into the step after next (async), or the next.
    join(replica, slot);
    context_->queued(requests_[slot].id, end);
  }
}

void BatchingServer::refresh_routers() {
  refresh_at_ = SimTime::ns(std::numeric_limits<std::int64_t>::max());
  refresh_router(*router_, active_, router_refresh_at_);
  if (decode_router_) refresh_router(*decode_router_, decode_active_, decode_refresh_at_);
}

void BatchingServer::refresh_router(Router& router, std::span<ReplicaScheduler* const> view,
                                    SimTime& at) {
  const std::optional<Duration> period = router.refresh_period();
  if (!period) return;
  if (now_ >= at) {
    // The state stands as it did at the latest refresh instant: nothing
    // changed since, as every change comes through handle().
    const std::int64_t every = period->count_ns();
    at = SimTime::ns((now_.count_ns() / every + 1) * every);
    router.refresh(view);
  }
  refresh_at_ = std::min(refresh_at_, at);
}

void BatchingServer::queue_transfer(std::uint32_t replica, std::uint32_t slot, SimTime now) {
  // latency + p tokens' bytes over the link's bandwidth, each rounded to ns,
  // after the transfers queued before it on this link.
  const BatchedRequest& r = requests_[slot];
  const double bytes = static_cast<double>(r.prompt) * knobs_.kv_bytes_per_token;
  const Duration xfer =
      Duration::ns(link_latency_ns_ + std::llround(bytes * 8 / (knobs_.kv_link_gbps * 1e9) * 1e9));
  kv_bytes_ += bytes;
  Link& link = links_[replica];
  link.end = on_clock(std::max(now, link.end), xfer, [] {
    return std::string(
        "batching.kv_bytes_per_token, batching.kv_link_gbps, batching.kv_link_latency_s");
  });
  ++link.queued;
  // Transfers ending at one instant run in the order they were queued: by
  // their first token's instant, prefill replica, then batch order.
  context_->schedule(link.end, Phase::kTransfer, kTransferEnd,
                     slot | (std::uint64_t{replica} << 32));
}

void BatchingServer::end_transfer(std::uint32_t slot, std::uint32_t replica) {
  const SimTime now = now_;
  Replica& from = replicas_[replica];
  from.scheduler->release_handed(slot);
  --links_[replica].queued;
  BatchedRequest& r = requests_[slot];
  transfers_.push_back(now - r.last_token);  // its first token's instant
  r.transfer_end = now;
  r.transferred = true;
  join(*decode_active_[route(*decode_router_, r, decode_active_)], slot);
  // Its blocks are free: the prefill replica may admit what waited for them.
  mark(replica);
  if (ready(replica)) request_pass();
  if (from.state == State::kDraining && idle(replica) && holds_nothing(replica)) {
    make_absent(replica, now);
  }
}

void BatchingServer::end_step(std::uint32_t i, SimTime now) {
  step_end_[i] = kIdle;
  --stepping_;
  mark(i);
  ReplicaScheduler& replica = *replicas_[i].scheduler;
  gaps_.clear();
  finished_.clear();
  handed_.clear();
  replica.complete(now, *context_, gaps_, finished_, handed_);
  if (!finished_.empty() || !handed_.empty()) imbalance_moved_ = true;
  if (!gaps_.empty()) context_->token_gaps(gaps_);
  for (const std::uint32_t slot : handed_)
    queue_transfer(i, slot, now);
  for (const std::uint32_t slot : finished_) {
    served_tokens_ += static_cast<double>(requests_[slot].prompt + requests_[slot].output);
    release_slot(slot);
  }
  if (knobs_.async_scheduling && !knobs_.lockstep) replica.advance_pending();
  // A draining replica that holds nothing more goes (section 11).
  if (replicas_[i].state == State::kDraining && holds_nothing(i)) make_absent(i, now);
}

void BatchingServer::end_steps(std::uint32_t replica) {
  const SimTime now = now_;
  if (ends_done_at_ == now) return;  // the first end event of an instant did them all
  ends_done_at_ = now;
  bool ended = false;
  if (!knobs_.lockstep && !context_->pending_now_before(Phase::kTransfer)) {
    // No other step end is left at this instant (each has its event, of this
    // phase): the event's own replica is the one whose step ends, and the
    // scan below would find it alone.
    if (step_end_[replica] == now) {
      end_step(replica, now);
      ended = true;
    }
  } else {
    for (std::uint32_t i = 0; i < step_end_.size(); ++i) {
      if (step_end_[i] != now) continue;
      end_step(i, now);
      ended = true;
    }
  }
  if (knobs_.async_scheduling && knobs_.lockstep && ended) {
    for (std::uint32_t i = 0; i < replicas_.size(); ++i) {
      replicas_[i].scheduler->advance_pending();
      mark(i);
    }
  }
  if (knobs_.lockstep && any_stepping()) return;
  for_each_ready([&](std::uint32_t) {
    request_pass();
    return false;
  });
}

void BatchingServer::schedule_pass() {
  const SimTime now = now_;
  pass_at_ = SimTime::ns(-1);
  passed_at_ = now;
  stalled_ = false;
  if (!knobs_.lockstep) {
    for_each_ready([&](std::uint32_t i) {
      ReplicaScheduler& replica = *replicas_[i].scheduler;
      StepRecord record;
      if (!replica.schedule(now, *context_, record)) {
        stalled_ = true;  // it stays marked
        return true;
      }
      record.end = step_end(now, costs_[replicas_[i].cls], work_of(record));
      begin_step(i, now, record.end);
      ++steps_;
      batched_requests_ += record.batch_requests;
      context_->stepped(record);
      context_->schedule(record.end, Phase::kDeparture, kStepEnd, replica.index());
      return true;
    });
    return;
  }
  // Lockstep: only when no replica steps; every replica that forms a batch
  // steps until the latest end among them.
  if (any_stepping()) return;
  planned_.clear();
  std::uint64_t round_tokens = 0;
  for (Replica& slot : replicas_) {
    ReplicaScheduler& replica = *slot.scheduler;
    if (!replica.has_work()) continue;
    StepRecord record;
    if (!replica.schedule(now, *context_, record)) continue;
    round_tokens += record.expert_tokens;
    planned_.push_back(record);
  }
  // The experts, split among the replicas, see the round's tokens.
  SimTime end = now;
  for (StepRecord& record : planned_) {
    record.expert_tokens = round_tokens;
    record.expert_share = static_cast<std::uint32_t>(replicas_.size());
    end = std::max(end, step_end(now, costs_.front(), work_of(record)));
  }
  for (StepRecord& record : planned_) {
    record.end = end;
    begin_step(record.replica, now, end);
    ++steps_;
    batched_requests_ += record.batch_requests;
    context_->stepped(record);
  }
  if (!planned_.empty()) context_->schedule(end, Phase::kDeparture, kStepEnd, 0);
}

void BatchingServer::schedule_evaluation(SimTime after) {
  SimTime next = SimTime::ns(-1);
  for (std::uint32_t c = 0; c < classes_.size(); ++c) {
    if (!rules_[c]) continue;
    if (next < SimTime::zero() || next_evaluation_[c] < next) next = next_evaluation_[c];
  }
  if (next < SimTime::zero() || next <= after) return;
  evaluation_at_ = next;
  context_->schedule(next, Phase::kEvaluate, kEvaluate, 0);
}

std::string BatchingServer::autoscale_key(std::uint32_t cls, const char* key) const {
  return "batching.fleet (class " + classes_[cls].name + ").autoscale." + key;
}

void BatchingServer::start_replica(std::uint32_t slot, SimTime now) {
  Replica& r = replicas_[slot];
  r.state = State::kStarting;
  r.since = now;
  r.active_from.reset();
  ++r.generation;
  ++scale_ups_;
  // A start-up of 0 makes it active at the next instant (section 13.4).
  const Duration startup = std::max(classes_[r.cls].autoscale->startup, Duration::ns(1));
  context_->schedule(on_clock(now, startup, [&] { return autoscale_key(r.cls, "startup_s"); }),
                     Phase::kActivate, kActivate, slot | (std::uint64_t{r.generation} << 32));
}

void BatchingServer::activate(std::uint32_t slot, std::uint32_t generation) {
  Replica& r = replicas_[slot];
  if (r.state != State::kStarting || r.generation != generation) return;  // it went first
  r.state = State::kActive;
  r.active_from = now_;
  r.scheduler = make_scheduler(slot, classes_[r.cls]);
  links_[slot] = Link{};
  mark(slot);
  rebuild_active();
  if (stalled_) request_pass();  // an instant of the run (section 13.7)
}

void BatchingServer::make_absent(std::uint32_t slot, SimTime now) {
  Replica& r = replicas_[slot];
  const ReplicaClass& cls = classes_[r.cls];
  ClassTotals& gone = gone_[r.cls];
  const Duration provisioned = now - r.since;
  gone.provisioned += provisioned;
  if (r.scheduler) {
    const ReplicaScheduler& s = *r.scheduler;
    gone.busy += s.busy();
    gone.energy_wh += replica_energy_wh(ReplicaPower::of(cls.knobs), 1, provisioned, s.busy());
    gone_preemptions_ += s.preemptions();
    gone_evicted_ += s.pool().evicted();
    gone_admissions_ += s.admissions();
    gone_tokens_ += s.admitted_tokens();
    gone_hits_ += s.admitted_hit_tokens();
    SlotTotals& slot_gone = slot_totals_[slot];
    slot_gone.tokens += s.admitted_tokens();
    slot_gone.hits += s.admitted_hit_tokens();
    slot_gone.busy += s.busy();
    gone_kv_peak_ = std::max(gone_kv_peak_, static_cast<double>(s.peak_used_blocks()) /
                                                static_cast<double>(cls.knobs.kv_blocks));
  } else {
    gone.energy_wh +=
        replica_energy_wh(ReplicaPower::of(cls.knobs), 1, provisioned, Duration::zero());
  }
  if (fleet_) spans_.push_back({slot, r.cls, r.since, r.active_from, now});
  if (kv_delay_ && r.scheduler) {
    // Its events so far, then its cache gone.
    stamp_kv_events();
    kv_pending_.push_back({now + *kv_delay_, slot, {PrefixIndex::kCleared, false}});
  }
  const bool was_active = r.state == State::kActive;
  r.state = State::kAbsent;
  r.scheduler.reset();
  if (was_active) rebuild_active();
}

void BatchingServer::evaluate() {
  const SimTime now = now_;
  // Evaluations go on while some request is still to reach the server or
  // unfinished (section 13.2).
  const bool in_flight = requests_.size() > free_slots_.size();
  if (!in_flight && !context_->requests_to_come()) return;
  for (std::uint32_t c = 0; c < classes_.size(); ++c) {
    if (!rules_[c] || next_evaluation_[c] != now) continue;
    ScalingRule& rule = *rules_[c];
    next_evaluation_[c] =
        on_clock(now, rule.interval(), [&] { return autoscale_key(c, "interval_s"); });
    const ScalingObservation observed = observe(c);
    scale(c, rule.desired(observed), observed.current);
  }
  peak_provisioned_ = std::max(peak_provisioned_, provisioned_count());
  schedule_evaluation(now);
}

ScalingObservation BatchingServer::observe(std::uint32_t cls) const {
  ScalingObservation o;
  o.now = now_;
  for (const Replica& r : replicas_) {
    if (r.cls != cls) continue;
    if (r.state == State::kStarting) ++o.current;
    if (r.state == State::kActive) {
      o.load += r.scheduler->requests();
      ++o.current;
    }
  }
  return o;
}

void BatchingServer::scale(std::uint32_t cls, std::int64_t desired, std::int64_t current) {
  const SimTime now = now_;
  std::vector<std::uint32_t> absent, starting, active;
  for (std::uint32_t i = 0; i < replicas_.size(); ++i) {
    const Replica& r = replicas_[i];
    if (r.cls != cls) continue;
    if (r.state == State::kAbsent) absent.push_back(i);
    if (r.state == State::kStarting) starting.push_back(i);
    if (r.state == State::kActive) active.push_back(i);
  }
  if (desired > current) {
    // In its lowest absent slots, as many as it has.
    const auto n =
        std::min<std::size_t>(static_cast<std::size_t>(desired - current), absent.size());
    for (std::size_t j = 0; j < n; ++j)
      start_replica(absent[j], now);
    return;
  }
  if (desired >= current) return;
  std::int64_t going = current - desired;
  // Starting replicas first, the latest started first (then the highest
  // index); then active ones, the highest index first.
  std::sort(starting.begin(), starting.end(), [&](std::uint32_t x, std::uint32_t y) {
    if (replicas_[x].since != replicas_[y].since) return replicas_[x].since > replicas_[y].since;
    return x > y;
  });
  for (const std::uint32_t i : starting) {
    if (going == 0) break;
    make_absent(i, now);
    ++scale_downs_;
    --going;
  }
  for (auto it = active.rbegin(); it != active.rend() && going > 0; ++it, --going) {
    Replica& r = replicas_[*it];
    ++scale_downs_;
    if (idle(*it) && holds_nothing(*it)) {
      make_absent(*it, now);
    } else {
      r.state = State::kDraining;
      rebuild_active();
    }
  }
}

namespace {

// A knob's value as settings.json writes it: a number in its shortest form.
std::string knob_text(double v) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof(text), v).ptr;
  return std::string(text, end);
}

// A fleet's class's knobs, as its replicas run them (section 11).
ClassDescription describe_class(const ReplicaClass& cls, bool disaggregated) {
  const BatchingKnobs& k = cls.knobs;
  const auto number = [](std::int64_t v) { return knob_text(static_cast<double>(v)); };
  ClassDescription c;
  c.name = cls.name;
  c.preset = cls.preset;
  if (disaggregated) c.role = to_string(cls.role);
  std::string count = number(cls.replicas);
  if (cls.autoscale) {
    count = number(cls.autoscale->min) + " to " + number(cls.autoscale->max) +
            ", autoscaled from " + count;
  }
  c.knobs = {
      {"Replicas", "", "replicas", "", "", "", count},
      {"GPUs a replica", "", "gpus", "", "", "", number(cls.gpus)},
      {"Price of a GPU-hour", "", "price_per_gpu_hour", "", "", "",
       "$" + knob_text(cls.price_per_gpu_hour)},
  };
  // Then every knob a class sets, as its replicas run it, labelled by its row.
  for (const Knob<BatchingKnobs>& row : batching_knob_rows()) {
    if (!row.class_knob || row.label_text.empty()) continue;
    std::string value = knob_value_text(row.get(k)) + row.unit_text;
    if (!row.pair_key.empty()) {
      const Knob<BatchingKnobs>& pair = *find_batching_knob(row.pair_key);
      value += " / " + knob_value_text(pair.get(k)) + pair.unit_text;
    }
    c.knobs.push_back({row.label_text, "", row.key, "", row.pair_key, "", value});
  }
  std::string autoscale = "none";
  if (cls.autoscale) {
    const Autoscale& a = *cls.autoscale;
    autoscale = "every " + knob_text(a.interval.seconds()) + " s, " + knob_text(a.target_requests) +
                " requests a replica, start-up " + knob_text(a.startup.seconds()) +
                " s, scale-down delay " + knob_text(a.scale_down_delay.seconds()) + " s";
  }
  c.knobs.push_back({"Autoscaling", "", "autoscale", "", "", "", autoscale});
  return c;
}

}  // namespace

ServerDescription BatchingServer::describe() const {
  ServerDescription d;
  d.kind = "batching";
  d.unit = "replica";
  d.units = static_cast<std::uint32_t>(replicas_.size());
  if (fleet_) {
    for (const Replica& r : replicas_) {
      d.unit_dynamic_w.push_back(ReplicaPower::of(classes_[r.cls].knobs).dynamic_w);
    }
  }
  const std::string router = "router " + to_string(knobs_.router);
  if (fleet_) {
    // "a fleet of big (1) and small (1 to 4, autoscaled from 1) (router ...)"
    d.headline = "a fleet of ";
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const ReplicaClass& cls = classes_[c];
      std::string count = std::to_string(cls.replicas);
      if (cls.autoscale) {
        count = std::to_string(cls.autoscale->min) + " to " + std::to_string(cls.autoscale->max) +
                ", autoscaled from " + count;
      }
      if (disaggregated_) count += std::string(", ") + to_string(cls.role);
      d.headline += std::string(c == 0                     ? ""
                                : c + 1 == classes_.size() ? " and "
                                                           : ", ") +
                    cls.name + " (" + count + ")";
    }
    d.headline += " (" + router +
                  (disaggregated_ ? ", decode router " + to_string(knobs_.decode_router) : "") +
                  ")";
  } else {
    d.headline = std::to_string(knobs_.replicas) +
                 (knobs_.replicas == 1 ? " batching replica" : " batching replicas") + " (" +
                 router + ", " + std::to_string(knobs_.kv_blocks) + " KV blocks of " +
                 std::to_string(knobs_.block_tokens) + " tokens each)";
  }
  d.wait_name = "Wait to be scheduled";
  d.wait_title = "Wait to be Scheduled";
  d.wait_meaning = "server to the first step it is part of.";
  d.queue_title = "Requests waiting to be scheduled";
  d.queue_until = "entered a step";
  d.busy_words = "replicas step";
  d.labels = {{"compute_s", "Total replica busy time"},
              {"utilization", "Average replica utilization (time stepping)"},
              {"waiting_total_s", "Total time spent waiting to be scheduled"}};
  d.table_after_requests = {"rejected"};
  d.table_after_compute = {};
  d.table_after_tpot = {"itl_mean_s"};
  d.table_last = {"prefix_hit_rate",     "preemptions",        "evicted_blocks",
                  "kv_peak_utilization", "avg_batch_requests", "replica_hours",
                  "gpu_hours",           "peak_replicas",      "scale_ups",
                  "scale_downs",         "cost_usd",           "usd_per_million_tokens"};
  d.figure_groups = {
      {"Server", {"utilization", "compute_s", "waiting_total_s", "traffic_mb", "energy_wh"}},
      {"Batching server",
       {"prefix_hit_rate", "preemptions", "evicted_blocks", "kv_peak_utilization",
        "avg_batch_requests", "steps"}},
      {"Fleet and bill",
       {"replica_hours", "gpu_hours", "peak_replicas", "scale_ups", "scale_downs", "cost_usd",
        "usd_per_million_tokens"}}};
  d.knob_title = "Batching server";
  // The page's rows, each labelled by its knob's row (model/batching_knobs),
  // in the rows' order for the page, then any row added from outside; those
  // of a split fleet last, and only for one.
  // A router's own knobs only when a router of the run reads them.
  const auto read = [&](const Knob<BatchingKnobs>& row) {
    const auto& names = row.router_names;
    const auto named = [&](RouterKind kind) {
      return std::find(names.begin(), names.end(), to_string(kind)) != names.end();
    };
    return names.empty() || named(knobs_.router) || (disaggregated_ && named(knobs_.decode_router));
  };
  std::vector<const Knob<BatchingKnobs>*> shown;
  for (const Knob<BatchingKnobs>& row : batching_knob_rows())
    if (!row.label_text.empty() && read(row)) shown.push_back(&row);
  std::stable_sort(shown.begin(), shown.end(), [](const auto* a, const auto* b) {
    const auto place = [](const Knob<BatchingKnobs>* r) {
      return std::make_pair(r->split_only, r->page_order == 0 ? INT_MAX : r->page_order);
    };
    return place(a) < place(b);
  });
  d.knobs.clear();
  for (const Knob<BatchingKnobs>* row : shown)
    if (!row->split_only) d.knobs.push_back(batching_page_row(row->key));
  if (fleet_) {
    // The classes' own knobs go with each class; the section's values of
    // them run no replica. What stays is fleet-wide, as the server runs it.
    d.knob_title = "Batching server, fleet-wide";
    // The values the server runs with, of the knobs no class sets (the count
    // is each class's); the longest request is the fleet's.
    d.knobs.clear();
    for (const Knob<BatchingKnobs>* knob : shown) {
      if (knob->class_knob || knob->split_only || knob->key == "replicas") continue;
      KnobRow row = batching_page_row(knob->key);
      const auto value =
          knob->key == "max_model_len" ? nlohmann::ordered_json(model_len_) : knob->get(knobs_);
      row.value = knob_value_text(value) + row.unit;
      row.unit.clear();
      d.knobs.push_back(row);
    }
    for (const ReplicaClass& cls : classes_)
      d.classes.push_back(describe_class(cls, disaggregated_));
  }
  d.latency_terms = {{"ITL",
                      "inter-token latency: every gap between two consecutive tokens of a "
                      "request, as the replicas' steps produce them."}};
  d.server_terms = {
      {"Utilization and energy",
       "the replicas' stepping time over their time, and their idle power plus the share of it "
       "while stepping, plus the devices' radios."},
      {"KV cache and batches",
       "the blocks in use as each step found them, the requests a step runs, the share of the "
       "admitted tokens found in the prefix cache, and the requests preempted for want of "
       "blocks."}};
  d.series_words =
      ", the batching server's running and waiting requests, KV blocks, steps and prefix hits";
  d.steps = true;
  d.hands_over = disaggregated_;
  if (disaggregated_) {
    for (const Knob<BatchingKnobs>* row : shown)
      if (row->split_only) d.knobs.push_back(batching_page_row(row->key));
    d.table_last.insert(d.table_last.end(),
                        {"kv_transfers", "kv_transfer_p99_s", "decode_wait_p99_s"});
    d.figure_groups.push_back({"Disaggregated prefill and decode",
                               {"kv_transfers", "kv_transfer_gb", "kv_transfer_p50_s",
                                "kv_transfer_p99_s", "decode_wait_p99_s"}});
  }
  // The KV blocks of its replicas, when their number is fixed.
  double blocks = 0;
  for (const ReplicaClass& cls : classes_) {
    if (cls.autoscale) return d;
    blocks += static_cast<double>(cls.replicas) * static_cast<double>(cls.knobs.kv_blocks);
  }
  d.kv_blocks = blocks;
  return d;
}

ServerUsage BatchingServer::usage(SimTime end) const {
  ServerUsage usage;
  usage.unit = "replica";
  usage.units = static_cast<std::uint32_t>(replicas_.size());
  std::uint64_t preemptions = gone_preemptions_, evicted = gone_evicted_;
  std::uint64_t admissions = gone_admissions_, tokens = gone_tokens_, hits = gone_hits_;
  double kv_peak = gone_kv_peak_;
  std::vector<ClassTotals> totals = gone_;
  for (const Replica& r : replicas_) {
    if (r.state == State::kAbsent) continue;
    const ReplicaClass& cls = classes_[r.cls];
    ClassTotals& t = totals[r.cls];
    const Duration provisioned = end - r.since;
    t.provisioned += provisioned;
    if (!r.scheduler) {
      t.energy_wh +=
          replica_energy_wh(ReplicaPower::of(cls.knobs), 1, provisioned, Duration::zero());
      continue;
    }
    const ReplicaScheduler& s = *r.scheduler;
    t.busy += s.busy();
    t.energy_wh += replica_energy_wh(ReplicaPower::of(cls.knobs), 1, provisioned, s.busy());
    preemptions += s.preemptions();
    evicted += s.pool().evicted();
    admissions += s.admissions();
    tokens += s.admitted_tokens();
    hits += s.admitted_hit_tokens();
    kv_peak = std::max(kv_peak, static_cast<double>(s.peak_used_blocks()) /
                                    static_cast<double>(cls.knobs.kv_blocks));
  }
  Duration provisioned;
  for (const ClassTotals& t : totals) {
    usage.busy += t.busy;
    usage.energy_wh += t.energy_wh;
    provisioned += t.provisioned;
  }
  const auto count = [](std::uint64_t v) { return std::optional<double>(static_cast<double>(v)); };
  usage.figures.push_back({"rejected", count(rejected_), true});
  usage.rejection_limit =
      "a prompt and output longer than max_model_len " + std::to_string(model_len_) + " tokens" +
      (knobs_.max_model_len ? " (--max-model-len)"
                            : " (min(131072, kv_blocks " + std::to_string(knobs_.kv_blocks) +
                                  " x block_tokens " + std::to_string(knobs_.block_tokens) +
                                  "): --kv-blocks, --block-tokens or --max-model-len)");
  usage.figures.push_back({"preemptions", count(preemptions), true});
  usage.figures.push_back({"evicted_blocks", count(evicted), true});
  usage.figures.push_back({"prefix_hit_rate",
                           admissions == 0 ? std::nullopt
                                           : std::optional<double>(static_cast<double>(hits) /
                                                                   static_cast<double>(tokens)),
                           false});
  usage.figures.push_back({"steps", count(steps_), true});
  usage.figures.push_back({"avg_batch_requests",
                           steps_ == 0
                               ? std::nullopt
                               : std::optional<double>(static_cast<double>(batched_requests_) /
                                                       static_cast<double>(steps_)),
                           false});
  usage.figures.push_back({"kv_peak_utilization", kv_peak, false});
  usage.figures.push_back({"load_imbalance",
                           imbalance_time_ > 0
                               ? std::optional<double>(imbalance_integral_ / imbalance_time_)
                               : std::nullopt,
                           false});
  const auto compared = [&](std::uint64_t v) {
    return hit_compared_ == 0 ? std::nullopt : count(v);
  };
  usage.figures.push_back({"router_hit_tokens_predicted", compared(hit_predicted_), true});
  usage.figures.push_back({"router_hit_tokens_actual", compared(hit_actual_), true});
  for (std::uint32_t i = 0; i < replicas_.size(); ++i) {
    const Replica& r = replicas_[i];
    SlotTotals t = slot_totals_[i];
    if (r.scheduler) {
      t.tokens += r.scheduler->admitted_tokens();
      t.hits += r.scheduler->admitted_hit_tokens();
      t.busy += r.scheduler->busy();
    }
    ReplicaUsage u;
    u.replica = i;
    if (fleet_) u.cls = classes_[r.cls].name;
    u.routed = t.routed;
    if (t.tokens > 0)
      u.prefix_hit_rate = static_cast<double>(t.hits) / static_cast<double>(t.tokens);
    u.busy_s = t.busy.seconds();
    usage.replicas.push_back(u);
  }
  if (!fleet_) return usage;

  // Section 11: provisioned time, GPU-hours and the bill.
  usage.provisioned = provisioned;
  double replica_hours = 0, gpu_hours = 0, cost = 0;
  for (std::uint32_t c = 0; c < classes_.size(); ++c) {
    const ReplicaClass& cls = classes_[c];
    const ClassTotals& t = totals[c];
    ClassUsage u;
    u.name = cls.name;
    if (disaggregated_) u.role = to_string(cls.role);
    u.replica_hours = t.provisioned.seconds() / 3600;
    u.busy_s = t.busy.seconds();
    if (t.provisioned > Duration::zero()) u.utilization = u.busy_s / t.provisioned.seconds();
    u.cost_usd = cls.price_per_gpu_hour * static_cast<double>(cls.gpus) * u.replica_hours;
    u.gpus = cls.gpus;
    u.price_per_gpu_hour = cls.price_per_gpu_hour;
    u.gpu_hours = static_cast<double>(cls.gpus) * u.replica_hours;
    replica_hours += u.replica_hours;
    gpu_hours += u.gpu_hours;
    cost += u.cost_usd;
    usage.classes.push_back(u);
  }
  for (const Replica& r : replicas_)
    usage.unit_class.push_back(classes_[r.cls].name);
  usage.spans = spans_;
  for (std::uint32_t i = 0; i < replicas_.size(); ++i) {
    const Replica& r = replicas_[i];
    if (r.state != State::kAbsent) usage.spans.push_back({i, r.cls, r.since, r.active_from, end});
  }
  for (const ReplicaClass& cls : classes_) {
    usage.class_idle_w.push_back(ReplicaPower::of(cls.knobs).idle_w);
    usage.class_usd_per_hour.push_back(cls.price_per_gpu_hour * static_cast<double>(cls.gpus));
  }
  usage.figures.push_back({"replica_hours", replica_hours, false});
  usage.figures.push_back({"gpu_hours", gpu_hours, false});
  usage.figures.push_back({"cost_usd", cost, false});
  usage.figures.push_back(
      {"usd_per_million_tokens",
       served_tokens_ > 0 ? std::optional<double>(cost * 1e6 / served_tokens_) : std::nullopt,
       false});
  usage.figures.push_back({"peak_replicas", count(peak_provisioned_), true});
  usage.figures.push_back({"scale_ups", count(scale_ups_), true});
  usage.figures.push_back({"scale_downs", count(scale_downs_), true});
  if (!disaggregated_) return usage;

  // Section 12: the KV transfers and the decode side's queue.
  const auto ns_of = [](const std::vector<Duration>& durations) {
    std::vector<std::int64_t> ns;
    ns.reserve(durations.size());
    for (const Duration d : durations)
      ns.push_back(d.count_ns());
    return ns;
  };
  const std::vector<std::optional<double>> transfer =
      percentiles_seconds(ns_of(transfers_), {0.5, 0.99});
  usage.figures.push_back({"kv_transfers", count(transfers_.size()), true});
  usage.figures.push_back({"kv_transfer_gb", kv_bytes_ / 1e9, false});
  usage.figures.push_back({"kv_transfer_p50_s", transfer[0], false});
  usage.figures.push_back({"kv_transfer_p99_s", transfer[1], false});
  usage.figures.push_back(
      {"decode_wait_p99_s", percentiles_seconds(ns_of(decode_waits_), {0.99})[0], false});
  return usage;
}

double BatchingServer::energy_wh(Duration length, Duration busy) const {
  // Section 9's, for a run without a fleet; a fleet's slices are worked out
  // from its replicas' spans and their classes' power (report/time_series).
  return replica_energy_wh(ReplicaPower::of(classes_.front().knobs),
                           static_cast<double>(replicas_.size()), length, busy);
}

}  // namespace infersim
