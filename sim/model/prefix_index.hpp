// How the scorer and dynamo routers (BATCHING.md section 8) know what a
// replica has cached, as deployed routers do:
//   precise      the replica's own cache, told through its KV events (an
//                identity stored, an identity removed) that reach the router
//                kv_event_delay_s after they happen; with no delay, the
//                cache itself at the request;
//   approximate  the router's own LRU index of the block identities of the
//                prompts it sent each replica, prefix_index_blocks of them a
//                replica, blind to the replica's evictions (llm-d's
//                approximate prefix scorer).
// Either way a hit is the longest run of the prompt's identities from block 0
// the index holds, capped as the replica caps its own (section 4).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/sim_time.hpp"
#include "model/kv_block_pool.hpp"
#include "model/router_kinds.hpp"

namespace infersim {

struct BatchedRequest;
class ReplicaScheduler;

class PrefixIndex {
 public:
  // The identity of an event that clears a replica's index: its cache is a
  // new one (the replica started, or went).
  static constexpr std::uint64_t kCleared = KvBlockPool::kNoIdentity;

  PrefixIndex(PrefixIndexKind kind, double event_delay_s, std::int64_t capacity_blocks);

  // A precise index with a delay: how late the events reach it; none: it
  // reads the caches themselves, or keeps its own.
  std::optional<Duration> event_delay() const { return delay_; }
  // One of replica `replica`'s events reaching the router.
  void event(std::uint32_t replica, const KvEvent& e);
  // The hit in blocks of `r` at `s` as the index sees it now.
  std::uint32_t hit_blocks(const ReplicaScheduler& s, const BatchedRequest& r) const;
  // The router sent `r` to `s`: an approximate index records its identities,
  // the most recently used.
  void routed(const ReplicaScheduler& s, const BatchedRequest& r);

 private:
  // An approximate index's replica: identity -> its latest use, and the uses
  // in order (a use outlived by a later one of its identity is passed over).
  struct Lru {
    std::unordered_map<std::uint64_t, std::uint64_t> last;
    std::deque<std::pair<std::uint64_t, std::uint64_t>> uses;  // (use, identity)
    std::uint64_t clock = 0;
  };
  bool holds(std::uint32_t replica, std::uint64_t identity) const;

  PrefixIndexKind kind_;
  std::optional<Duration> delay_;
  std::size_t capacity_;
  std::vector<std::unordered_set<std::uint64_t>> known_;  // precise, by replica
  std::vector<Lru> lru_;                                  // approximate, by replica
};

}  // namespace infersim
