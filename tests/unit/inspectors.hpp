// What the tests read of the models' private state and nothing else needs: a
// KV block's count and identity and the free queue's order, the batching
// server's replicas and the slots it holds. The models name these structs
// their friends; the code that reads them lives here, with the tests.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/batching_server.hpp"
#include "model/kv_block_pool.hpp"

namespace infersim::test {

struct PoolInspector {
  static std::uint32_t count(const KvBlockPool& p, std::uint32_t block) {
    return p.node_[block].count;
  }
  // Its identity (BATCHING.md section 4), or kNoIdentity: the slot's group
  // key and its place in the group.
  static std::uint64_t identity(const KvBlockPool& p, std::uint32_t block) {
    const std::uint32_t slot = p.node_[block].slot;
    if (slot == KvBlockPool::kNoSlot) return KvBlockPool::kNoIdentity;
    const std::uint64_t key = p.group_key_[slot >> p.width_shift_];
    const std::uint32_t low = (static_cast<std::uint32_t>(key) << p.width_shift_) |
                              (slot & ((std::uint32_t{1} << p.width_shift_) - 1));
    return (key & 0xFFFFFFFF00000000ull) | low;
  }
  // The free queue from head to back: the ring's places that are their
  // block's.
  static std::vector<std::uint32_t> free_queue(const KvBlockPool& p) {
    std::vector<std::uint32_t> queue;
    for (std::uint64_t place = p.head_; place != p.tail_; ++place) {
      const std::uint32_t b = p.ring_[place & p.ring_mask_];
      if (p.queued_at(b, place)) queue.push_back(b);
    }
    return queue;
  }
};

struct ServerInspector {
  // The replicas present now (absent slots left out), in index order.
  static std::vector<const ReplicaScheduler*> replicas(const BatchingServer& s) {
    std::vector<const ReplicaScheduler*> out;
    for (const auto& r : s.replicas_) {
      if (r.scheduler) out.push_back(r.scheduler.get());
    }
    return out;
  }
  // Puts `router` where the server's (prefill-side) router was: a test's
  // router that watches another's picks.
  static void set_router(BatchingServer& s, std::unique_ptr<Router> router) {
    s.router_ = std::move(router);
    s.refreshes_ =
        s.router_->refresh_period() || (s.decode_router_ && s.decode_router_->refresh_period());
  }
  // Requests in flight (accepted, not finished or rejected).
  static std::size_t in_flight(const BatchingServer& s) {
    return s.requests_.size() - s.free_slots_.size();
  }
};

}  // namespace infersim::test
