// One batching replica (BATCHING.md sections 4, 5 and 10): its KV block pool,
// its `waiting` queue, its `running` list and, with async scheduling, its
// pending requests; the step algorithm (running requests first, preempting the
// last one by recomputation when blocks run short, then admissions from the
// front of waiting) and the end of a step. On one side of a disaggregated
// fleet (section 12), a prefill replica hands a request over at its first
// token and keeps its blocks until the server releases them, and a decode
// replica admits a transferred request with its prompt computed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "core/sim_time.hpp"
#include "model/batching_knobs.hpp"
#include "model/block_identity.hpp"
#include "model/kv_block_pool.hpp"
#include "model/replica_class.hpp"
#include "model/server_model.hpp"

namespace infersim {

struct StepCost;

// A request in flight on the batching server, from its acceptance to its
// finish (a slot the server reuses afterwards; block lists keep their
// capacity). What a step reads of every request in its batch comes first, in
// one cache line.
struct alignas(64) BatchedRequest {
  std::int64_t computed = 0;          // tokens with KV
  std::int64_t num_tokens = 0;        // prompt + out
  std::int64_t out = 0;               // tokens produced so far
  std::int64_t output = 0;            // o
  std::int64_t scheduled = 0;         // n of the step it is in
  std::vector<std::uint32_t> blocks;  // held, in order
  // Register has considered blocks [0, registered); of those, `anonymous` (in
  // order) were left without their identity because another block held it,
  // as of `anonymous_seen` evictions of the pool: only an eviction can free
  // one of their identities, so they are tried again only after one.
  std::uint32_t registered = 0;
  bool started = false;
  bool has_token = false;    // a token has left (last_token is its instant)
  bool transferred = false;  // waiting on a decode replica with its KV (section 12)
  SimTime transfer_end;      // its KV transfer's end, once handed over
  PromptBlocks prompt_blocks;
  std::vector<std::uint32_t> anonymous;
  std::uint64_t anonymous_seen = 0;
  SimTime last_token;
  std::int64_t prompt = 0;  // p
  std::uint64_t id = 0;
  std::uint64_t hit_tokens = 0;  // Σ hit over its admissions
  std::uint32_t preemptions = 0;
  // The hit its router expected at the replica it picked (-1: it expected
  // none), and the hit of its first admission (-1: none yet), in tokens.
  std::int64_t predicted_hit = -1;
  std::int64_t first_hit = -1;
};

class ReplicaScheduler {
 public:
  // `requests` is the server's slot array (indexed by slot; it may grow
  // between events, so nothing here keeps a reference into it).
  ReplicaScheduler(std::uint32_t index, const BatchingKnobs& knobs,
                   std::vector<BatchedRequest>& requests, Role role = Role::kBoth);

  std::uint32_t index() const { return index_; }
  Role role() const { return role_; }
  // Joins the back of waiting (at once) or becomes pending with a count of 2.
  void enqueue(std::uint32_t slot);
  void enqueue_pending(std::uint32_t slot, std::uint32_t count = 2);
  // Section 10, at a step end: counts fall by 1, those at 0 join waiting in
  // the order they became pending; all do if nothing is running or waiting.
  void advance_pending();

  bool has_work() const { return !running_.empty() || !waiting_.empty(); }

  // Section 5 at `now`: forms the batch, reports the requests that start, and
  // fills `record` (all but `end`; its expert tokens are its own). Returns
  // false for an empty batch (the replica stays idle). The step's cost is the
  // server's to work out (model/step_cost.hpp): in lockstep it depends on the
  // round.
  bool schedule(SimTime now, ServerContext& context, StepRecord& record);
  // The end of the step at `now`: tokens appear (their gaps appended to
  // `gaps`), requests finish and are reported; their slots are appended to
  // `finished`. On a prefill replica, the requests that produced their first
  // token with more to come leave running, blocks held, and are appended to
  // `handed` in batch order.
  void complete(SimTime now, ServerContext& context, std::vector<Duration>& gaps,
                std::vector<std::uint32_t>& finished, std::vector<std::uint32_t>& handed);
  // Where a decode replica appends each transferred request's wait from its
  // transfer's end to its admission (section 12's decode_wait_p99_s).
  void set_decode_waits(std::vector<Duration>* waits) { decode_waits_ = waits; }
  // A handed-over request's KV has left: its blocks are released (section 4).
  void release_handed(std::uint32_t slot) { release_blocks(at(slot)); }

  // What the routers see (section 8, pending requests counted as waiting).
  std::uint64_t requests() const { return waiting_.size() + pending_.size() + running_.size(); }
  std::int64_t waiting_tokens() const { return waiting_tokens_; }
  std::uint64_t queued() const { return waiting_.size() + pending_.size(); }
  std::uint64_t running() const { return running_.size(); }
  std::uint32_t used_blocks() const { return pool_.used_blocks(); }
  // The hit length in blocks of `r` here, as if it were admitted now.
  std::uint32_t hit_blocks(const BatchedRequest& r) const;
  // The most blocks a hit of `r` may have here: 0 without prefix caching,
  // else (num_tokens - 1) div B, at most its blocks with an identity.
  std::uint32_t hit_cap(const BatchedRequest& r) const {
    if (!prefix_caching_) return 0;
    return static_cast<std::uint32_t>(
        std::min<std::int64_t>((r.num_tokens - 1) / block_tokens_, r.prompt_blocks.count()));
  }
  // What a queued request counts in waiting_tokens(), num_tokens - computed:
  // its num_tokens (nothing is computed while it waits), or 1 for a
  // transferred one (its prompt's KV came with it).
  static std::int64_t queued_tokens(const BatchedRequest& r) {
    return r.transferred ? 1 : r.num_tokens;
  }
  // Its cache's KV events from now on are appended to `sink` (none: nullptr).
  void record_kv_events(std::vector<KvEvent>* sink) { pool_.record_events(sink); }
  // Its class's step cost (set by the server; the scorer router's
  // predicted_ttft reads it) and max_num_batched_tokens.
  void set_step_cost(const StepCost* cost) { cost_ = cost; }
  const StepCost* step_cost() const { return cost_; }
  std::int64_t max_batched_tokens() const { return max_batched_tokens_; }

  // Figures.
  std::uint64_t preemptions() const { return preemptions_; }
  std::uint64_t admitted_tokens() const { return admitted_tokens_; }
  std::uint64_t admitted_hit_tokens() const { return admitted_hit_tokens_; }
  std::uint64_t admissions() const { return admissions_; }
  std::uint32_t peak_used_blocks() const { return peak_used_; }
  const KvBlockPool& pool() const { return pool_; }

  // Busy time: a step of this replica over [start, end) (with lockstep, end
  // is the latest among the replicas').
  void add_busy(SimTime start, SimTime end) { busy_ += end - start; }
  Duration busy() const { return busy_; }

 private:
  BatchedRequest& at(std::uint32_t slot) { return requests_[slot]; }
  std::int64_t blocks_for(std::int64_t tokens) const {
    return (tokens + block_tokens_ - 1) / block_tokens_;
  }
  void preempt_last();
  void release_blocks(BatchedRequest& r);
  // Register (section 4) of r's blocks as its computed tokens reach `tokens`.
  // Past its prompt's identities with none left anonymous (most calls: a
  // decode), there is nothing to do: that test inline, the work out of line.
  void register_blocks(BatchedRequest& r, std::int64_t tokens) {
    if (prefix_caching_ && (r.registered != r.prompt_blocks.count() || !r.anonymous.empty())) {
      register_more(r, tokens);
    }
  }
  void register_more(BatchedRequest& r, std::int64_t tokens);
  std::uint32_t front_hit(std::uint32_t slot);
  void drop_front_hit();

  std::uint32_t index_;
  Role role_;
  std::int64_t block_tokens_;
  std::int64_t max_seqs_;
  std::int64_t max_batched_tokens_;
  bool prefix_caching_;
  bool reserve_full_prompt_;
  std::vector<BatchedRequest>& requests_;
  KvBlockPool pool_;

  std::deque<std::uint32_t> waiting_;
  std::vector<std::uint32_t> running_;  // admission order; the batch is its first batch_ entries
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pending_;  // (slot, count)
  std::uint32_t batch_ = 0;
  std::int64_t waiting_tokens_ = 0;  // Σ queued_tokens over waiting and pending

  // The hit of the front waiting request, kept between steps while it cannot
  // be admitted: its blocks are watched in the pool (how many are free follows
  // their counts; an eviction among them forces a new walk) and the walk
  // resumes at the first miss when identities were registered since.
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
  std::uint32_t front_slot_ = kNoSlot;
  std::uint64_t front_registrations_ = 0;
  std::vector<std::uint32_t> front_blocks_;

  std::vector<Duration>* decode_waits_ = nullptr;
  const StepCost* cost_ = nullptr;
  std::uint64_t preemptions_ = 0;
  std::uint64_t admitted_tokens_ = 0;
  std::uint64_t admitted_hit_tokens_ = 0;
  std::uint64_t admissions_ = 0;
  std::uint32_t peak_used_ = 0;
  Duration busy_;
};

}  // namespace infersim
