#include "model/batching_server.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace infersim {

BatchingServer::BatchingServer(const BatchingKnobs& knobs)
    : knobs_(knobs),
      cost_(StepCost::of(knobs)),
      model_len_(knobs.model_len()),
      router_(knobs.router, knobs.block_tokens) {
  const auto count = static_cast<std::uint32_t>(knobs.replicas);
  replicas_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i)
    replicas_.emplace_back(i, knobs_, requests_);
  step_end_.assign(count, kIdle);
}

void BatchingServer::begin_step(std::uint32_t replica, SimTime start, SimTime end) {
  step_end_[replica] = end;
  replicas_[replica].add_busy(start, end);
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
  switch (kind) {
    case kArrive:
      arrive(static_cast<std::uint32_t>(subject));
      break;
    case kStepEnd:
      end_steps();
      break;
    case kSchedulePass:
      schedule_pass();
      break;
    default:
      throw std::logic_error("batching server: unknown event kind " + std::to_string(kind));
  }
}

void BatchingServer::release_slot(std::uint32_t slot) {
  free_slots_.push_back(slot);
}

void BatchingServer::request_pass() {
  const SimTime now = context_->now();
  if (pass_at_ == now) return;
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
    context_->rejected(r.id, context_->now());
    release_slot(slot);
    return;
  }
  const std::uint32_t index = router_.route(r, replicas_);
  ReplicaScheduler& replica = replicas_[index];
  // With lockstep a replica may schedule only when none steps.
  const bool busy = knobs_.lockstep ? any_stepping() : !idle(index);
  if (busy && knobs_.async_scheduling) {
    replica.enqueue_pending(slot);
  } else {
    replica.enqueue(slot);
    if (!busy) request_pass();
  }
}

void BatchingServer::end_steps() {
  const SimTime now = context_->now();
  if (ends_done_at_ == now) return;  // the first end event of an instant did them all
  ends_done_at_ = now;
  bool ended = false;
  for (std::uint32_t i = 0; i < step_end_.size(); ++i) {
    if (step_end_[i] != now) continue;
    step_end_[i] = kIdle;
    --stepping_;
    ended = true;
    ReplicaScheduler& replica = replicas_[i];
    gaps_.clear();
    finished_.clear();
    replica.complete(now, *context_, gaps_, finished_);
    if (!gaps_.empty()) context_->token_gaps(gaps_);
    for (const std::uint32_t slot : finished_)
      release_slot(slot);
    if (knobs_.async_scheduling && !knobs_.lockstep) replica.advance_pending();
  }
  if (knobs_.async_scheduling && knobs_.lockstep && ended) {
    for (ReplicaScheduler& replica : replicas_)
      replica.advance_pending();
  }
  if (knobs_.lockstep && any_stepping()) return;
  for (std::uint32_t i = 0; i < step_end_.size(); ++i) {
    if (idle(i) && replicas_[i].has_work()) {
      request_pass();
      break;
    }
  }
}

void BatchingServer::schedule_pass() {
  const SimTime now = context_->now();
  pass_at_ = SimTime::ns(-1);
  if (!knobs_.lockstep) {
    for (std::uint32_t i = 0; i < step_end_.size(); ++i) {
      if (!idle(i) || !replicas_[i].has_work()) continue;
      ReplicaScheduler& replica = replicas_[i];
      StepRecord record;
      if (!replica.schedule(now, *context_, record)) continue;
      record.end = now + cost_.duration(work_of(record));
      begin_step(i, now, record.end);
      ++steps_;
      batched_requests_ += record.batch_requests;
      context_->busy(replica.index(), now, record.end);
      context_->stepped(record);
      context_->schedule(record.end, Phase::kDeparture, kStepEnd, replica.index());
    }
    return;
  }
  // Lockstep: only when no replica steps; every replica that forms a batch
  // steps until the latest end among them.
  if (any_stepping()) return;
  planned_.clear();
  std::uint64_t round_tokens = 0;
  for (ReplicaScheduler& replica : replicas_) {
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
    end = std::max(end, now + cost_.duration(work_of(record)));
  }
  for (StepRecord& record : planned_) {
    record.end = end;
    begin_step(record.replica, now, end);
    ++steps_;
    batched_requests_ += record.batch_requests;
    context_->busy(record.replica, now, end);
    context_->stepped(record);
  }
  if (!planned_.empty()) context_->schedule(end, Phase::kDeparture, kStepEnd, 0);
}

ServerUsage BatchingServer::usage(SimTime end) const {
  ServerUsage usage;
  usage.unit = "replica";
  usage.units = static_cast<std::uint32_t>(replicas_.size());
  const double end_s = end.seconds();
  std::uint64_t preemptions = 0, evicted = 0, admissions = 0, tokens = 0, hits = 0;
  std::uint32_t peak = 0;
  for (const ReplicaScheduler& replica : replicas_) {
    usage.busy += replica.busy();
    usage.energy_wh += (knobs_.gpu_idle_w * end_s +
                        (knobs_.gpu_max_w - knobs_.gpu_idle_w) * replica.busy().seconds()) /
                       3600;
    preemptions += replica.preemptions();
    evicted += replica.pool().evicted();
    admissions += replica.admissions();
    tokens += replica.admitted_tokens();
    hits += replica.admitted_hit_tokens();
    peak = std::max(peak, replica.peak_used_blocks());
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
  usage.figures.push_back({"kv_peak_utilization",
                           static_cast<double>(peak) / static_cast<double>(knobs_.kv_blocks),
                           false});
  return usage;
}

double BatchingServer::energy_wh(Duration length, Duration busy) const {
  return (static_cast<double>(replicas_.size()) * knobs_.gpu_idle_w * length.seconds() +
          (knobs_.gpu_max_w - knobs_.gpu_idle_w) * busy.seconds()) /
         3600;
}

}  // namespace infersim
