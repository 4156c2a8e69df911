#include "model/replica_scheduler.hpp"

#include <algorithm>
#include <cassert>

#include "model/step_cost.hpp"

namespace infersim {

ReplicaScheduler::ReplicaScheduler(std::uint32_t index, const BatchingKnobs& knobs,
                                   std::vector<BatchedRequest>& requests, Role role)
    : index_(index),
      role_(role),
      block_tokens_(knobs.block_tokens),
      max_seqs_(knobs.max_num_seqs),
      max_batched_tokens_(knobs.max_num_batched_tokens),
      prefix_caching_(knobs.prefix_caching),
      reserve_full_prompt_(knobs.reserve_full_prompt),
      requests_(requests),
      pool_(static_cast<std::uint32_t>(knobs.kv_blocks)) {}

void ReplicaScheduler::enqueue(std::uint32_t slot) {
  waiting_.push_back(slot);
  const BatchedRequest& r = at(slot);
  waiting_tokens_ += queued_tokens(r);
  if (r.prompt_blocks.count() != 0) pool_.fit_groups(r.prompt_blocks.per_id());
}

void ReplicaScheduler::enqueue_pending(std::uint32_t slot, std::uint32_t count) {
  pending_.emplace_back(slot, count);
  const BatchedRequest& r = at(slot);
  waiting_tokens_ += queued_tokens(r);
  if (r.prompt_blocks.count() != 0) pool_.fit_groups(r.prompt_blocks.per_id());
}

void ReplicaScheduler::advance_pending() {
  if (pending_.empty()) return;
  // Pending requests count in waiting_tokens_ already.
  std::size_t kept = 0;
  for (auto& [slot, count] : pending_) {
    if (--count == 0) {
      waiting_.push_back(slot);
    } else {
      pending_[kept++] = {slot, count};
    }
  }
  pending_.resize(kept);
  if (running_.empty() && waiting_.empty()) {
    for (const auto& p : pending_)
      waiting_.push_back(p.first);
    pending_.clear();
  }
}

std::uint32_t ReplicaScheduler::hit_blocks(const BatchedRequest& r) const {
  // Capped at (num_tokens - 1) div B: the last token is always computed.
  const std::uint32_t cap = hit_cap(r);
  if (cap == 0) return 0;
  std::uint32_t h = 0;
  for (auto id = r.prompt_blocks.cursor(0); h < cap; id.next(), ++h) {
    if (pool_.find(*id) == KvBlockPool::kNoBlock) break;
  }
  return h;
}

void ReplicaScheduler::drop_front_hit() {
  for (const std::uint32_t b : front_blocks_)
    pool_.unwatch(b);
  front_blocks_.clear();
  front_slot_ = kNoSlot;
}

std::uint32_t ReplicaScheduler::front_hit(std::uint32_t slot) {
  if (!prefix_caching_) return 0;
  if (front_slot_ != slot || pool_.watched_evicted()) {
    drop_front_hit();
    pool_.clear_watch_evicted();
    front_slot_ = slot;
    front_registrations_ = pool_.registrations() - 1;  // walk from block 0
  }
  if (front_registrations_ != pool_.registrations()) {
    const BatchedRequest& r = at(slot);
    const auto cap = static_cast<std::uint32_t>(
        std::min<std::int64_t>((r.num_tokens - 1) / block_tokens_, r.prompt_blocks.count()));
    auto h = static_cast<std::uint32_t>(front_blocks_.size());
    if (h < cap) {
      for (auto id = r.prompt_blocks.cursor(h); h < cap; id.next(), ++h) {
        const std::uint32_t b = pool_.find(*id);
        if (b == KvBlockPool::kNoBlock) break;
        pool_.watch(b);
        front_blocks_.push_back(b);
      }
    }
    front_registrations_ = pool_.registrations();
  }
  return static_cast<std::uint32_t>(front_blocks_.size());
}

void ReplicaScheduler::release_blocks(BatchedRequest& r) {
  pool_.release_reversed(r.blocks);  // last block first
  r.blocks.clear();
  r.registered = 0;
  r.anonymous.clear();
}

void ReplicaScheduler::register_more(BatchedRequest& r, std::int64_t tokens) {
  const auto limit = static_cast<std::uint32_t>(
      std::min<std::int64_t>(tokens / block_tokens_, r.prompt_blocks.count()));
  if (!r.anonymous.empty() && r.anonymous_seen != pool_.evicted()) {
    std::size_t kept = 0;
    for (const std::uint32_t j : r.anonymous) {
      if (!pool_.assign(r.blocks[j], r.prompt_blocks.identity(j))) r.anonymous[kept++] = j;
    }
    r.anonymous.resize(kept);
  }
  if (r.registered < limit) {
    pool_.assign_run(r.blocks, r.registered, limit, r.prompt_blocks.cursor(r.registered),
                     r.anonymous);
  }
  r.registered = std::max(r.registered, limit);
  r.anonymous_seen = pool_.evicted();
}

void ReplicaScheduler::preempt_last() {
  const std::uint32_t slot = running_.back();
  running_.pop_back();
  BatchedRequest& r = at(slot);
  release_blocks(r);
  r.computed = 0;
  r.transferred = false;  // its re-admission recomputes here (section 12)
  ++r.preemptions;
  ++preemptions_;
  waiting_.push_front(slot);
  waiting_tokens_ += r.num_tokens;
}

bool ReplicaScheduler::schedule(SimTime now, ServerContext& context, StepRecord& record) {
  std::int64_t budget = max_batched_tokens_;
  std::uint64_t preempted = 0;
  std::uint64_t prefill = 0, pairs = 0, decodes = 0, context_tokens = 0, tokens = 0;
  std::uint64_t admitted_tokens = 0, admitted_hit = 0;
  std::size_t admitted = 0;
  const auto add_entry = [&](BatchedRequest& r, std::int64_t n) {
    // cb = r.computed before the step.
    const std::int64_t cb = r.computed;
    r.scheduled = n;
    tokens += static_cast<std::uint64_t>(n);
    if (r.out >= 1 && cb == r.num_tokens - 1) {
      ++decodes;
      context_tokens += static_cast<std::uint64_t>(cb + 1);
    } else {
      prefill += static_cast<std::uint64_t>(n);
      pairs += prefill_pairs(cb, n);
    }
  };

  // 1. Running requests, in admission order.
  std::size_t i = 0;
  bool stopped = false;
  while (i < running_.size() && budget > 0) {
    BatchedRequest& r = at(running_[i]);
    const std::int64_t n = std::min(r.num_tokens - r.computed, budget);
    // Most entries (decodes) fit in the blocks they hold: no division then.
    const auto held = static_cast<std::int64_t>(r.blocks.size());
    const std::int64_t need =
        r.computed + n <= held * block_tokens_ ? 0 : blocks_for(r.computed + n) - held;
    while (need > pool_.free_blocks()) {
      ++preempted;
      preempt_last();
      if (running_.size() == i) {  // r itself
        stopped = true;
        break;
      }
    }
    if (stopped) break;
    if (need > 0) pool_.take(static_cast<std::uint32_t>(need), r.blocks);
    register_blocks(r, r.computed + n);
    add_entry(r, n);
    budget -= n;
    ++i;
  }

  // 2. Waiting requests, from the front, unless a preemption happened.
  if (preempted == 0) {
    while (!waiting_.empty() && budget > 0 &&
           static_cast<std::int64_t>(running_.size()) < max_seqs_) {
      const std::uint32_t slot = waiting_.front();
      BatchedRequest& r = at(slot);
      const std::uint32_t h = front_hit(slot);
      const std::int64_t hit = std::int64_t{h} * block_tokens_;
      const std::int64_t touched = prefix_caching_ ? pool_.watched_free() : 0;
      // A transferred request (section 12) computes its one new token; the
      // transferred KV fills the blocks past the hit.
      const bool transferred = r.transferred;
      const std::int64_t n = transferred ? 1 : std::min(r.num_tokens - hit, budget);
      const std::int64_t fresh =
          transferred ? blocks_for(r.num_tokens) - h : blocks_for(hit + n) - h;
      std::int64_t need = fresh + touched;
      if (reserve_full_prompt_) need = std::max(need, blocks_for(r.num_tokens) - h + touched);
      if (need > pool_.free_blocks()) break;
      waiting_.pop_front();
      waiting_tokens_ -= queued_tokens(r);
      // The hit blocks, then new ones.
      r.blocks.reserve(static_cast<std::size_t>(h + fresh));
      for (const std::uint32_t b : front_blocks_) {
        pool_.unwatch(b);
        pool_.touch(b);
        r.blocks.push_back(b);
      }
      front_blocks_.clear();
      front_slot_ = kNoSlot;
      if (fresh > 0) pool_.take(static_cast<std::uint32_t>(fresh), r.blocks);
      r.computed = transferred ? r.num_tokens - 1 : hit;
      r.registered = h;  // the hit blocks are cached already
      register_blocks(r, r.computed + n);
      running_.push_back(slot);
      add_entry(r, n);
      budget -= n;
      // Only admissions on prefill (and colocated) replicas count their hits
      // (section 13.8).
      if (role_ != Role::kDecode) {
        if (r.first_hit < 0) r.first_hit = hit;
        r.hit_tokens += static_cast<std::uint64_t>(hit);
        admitted_tokens += static_cast<std::uint64_t>(r.num_tokens);
        admitted_hit += static_cast<std::uint64_t>(hit);
        ++admissions_;
      }
      ++admitted;
      if (transferred) {
        r.transferred = false;
        if (decode_waits_ != nullptr) decode_waits_->push_back(now - r.transfer_end);
        context.decoding(r.id, index_, r.transfer_end, now);
      }
      if (!r.started) {
        r.started = true;
        context.started(r.id, index_, now);
      }
    }
  }

  // The batch is a prefix of running: the running requests scheduled, then
  // (only when all of them were) the admitted ones.
  batch_ = static_cast<std::uint32_t>(i + admitted);
  admitted_tokens_ += admitted_tokens;
  admitted_hit_tokens_ += admitted_hit;
  peak_used_ = std::max(peak_used_, pool_.used_blocks());
  if (batch_ == 0) return false;

  record.replica = index_;
  record.start = now;
  record.batch_requests = batch_;
  record.scheduled_tokens = tokens;
  record.prefill_tokens = prefill;
  record.prefill_pairs = pairs;
  record.decode_requests = static_cast<std::uint32_t>(decodes);
  record.decode_context = context_tokens;
  record.expert_tokens = prefill + decodes;
  record.expert_share = 1;
  record.running = static_cast<std::uint32_t>(running_.size());
  record.waiting = static_cast<std::uint32_t>(waiting_.size() + pending_.size());
  record.kv_blocks_used = pool_.used_blocks();
  record.kv_blocks = pool_.blocks();
  record.preemptions = static_cast<std::uint32_t>(preempted);
  record.admitted_tokens = admitted_tokens;
  record.hit_tokens = admitted_hit;
  return true;
}

void ReplicaScheduler::complete(SimTime now, ServerContext& context, std::vector<Duration>& gaps,
                                std::vector<std::uint32_t>& finished,
                                std::vector<std::uint32_t>& handed) {
  std::size_t kept = 0;
  for (std::size_t e = 0; e < batch_; ++e) {
    const std::uint32_t slot = running_[e];
    BatchedRequest& r = at(slot);
    r.computed += r.scheduled;
    bool done = false;
    if (r.computed == r.num_tokens) {
      if (r.out < r.output) {
        ++r.out;
        ++r.num_tokens;
        if (r.has_token) {
          gaps.push_back(now - r.last_token);
        } else {
          r.has_token = true;
          context.first_token(r.id, now);
        }
        r.last_token = now;
      }
      if (r.out == r.output) {
        if (!r.has_token) context.first_token(r.id, now);  // o = 0
        context.finished(r.id, now, r.preemptions, r.hit_tokens);
        release_blocks(r);
        finished.push_back(slot);
        done = true;
      } else if (role_ == Role::kPrefill) {
        // Its first token: handed over to a decode replica, its blocks kept
        // until its KV has left (section 12).
        handed.push_back(slot);
        done = true;
      }
    }
    if (!done) running_[kept++] = slot;
  }
  if (kept != batch_) {
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(kept),
                   running_.begin() + static_cast<std::ptrdiff_t>(batch_));
  }
  batch_ = 0;
}

}  // namespace infersim
