// The KV cache of one batching replica (BATCHING.md section 4): K blocks with
// reference counts and at most one identity each, the free queue (every block
// whose count is 0, in order) and the map from identity to cached block. Every
// operation is O(1), amortized: the free queue is a ring of block numbers with
// tombstones (below), the map two-level (below), the free and used counts
// counters.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/block_identity.hpp"

namespace infersim {

namespace test {
struct PoolInspector;
}

// What a pool tells a router that follows its cache (vLLM's KV events): an
// identity stored (a block registered with it) or removed (its block taken
// and the identity lost).
struct KvEvent {
  std::uint64_t identity = 0;
  bool stored = false;
};

class KvBlockPool {
 public:
  static constexpr std::uint32_t kNoBlock = ~std::uint32_t{0};
  // No (h, sub) packs to it: sub < Bh / B < 2^32 - 1 (block_identity.hpp).
  static constexpr std::uint64_t kNoIdentity = ~std::uint64_t{0};

  // Blocks 0..blocks-1, all free and anonymous, queued in that order.
  explicit KvBlockPool(std::uint32_t blocks);
  // The bytes a pool of `blocks` takes before any identity is cached: a node
  // and up to two places in the ring a block (the map grows with the
  // identities cached).
  static constexpr std::uint64_t kBytesPerBlock = sizeof(std::uint32_t) * 6;

  std::uint32_t blocks() const { return blocks_; }
  std::uint32_t free_blocks() const { return free_; }            // count 0 (cached ones included)
  std::uint32_t used_blocks() const { return blocks_ - free_; }  // count >= 1
  std::uint64_t evicted() const { return evicted_; }             // identities lost by taken blocks
  // Identities given so far (Register); a change says the map may have grown.
  std::uint64_t registrations() const { return registrations_; }

  bool cached(std::uint32_t block) const { return node_[block].slot != kNoSlot; }
  // The block holding `identity`, or kNoBlock.
  std::uint32_t find(std::uint64_t identity) const;

  // Pops the head of the free queue (free_blocks() >= 1) with count 1; the
  // block loses its identity if it had one (an eviction).
  std::uint32_t take();
  // `n` takes in turn (free_blocks() >= n), their blocks appended to `out`: a
  // prompt's blocks come in runs, and one call keeps the ring's head and the
  // nodes at hand between them.
  void take(std::uint32_t n, std::vector<std::uint32_t>& out);
  // Count + 1 of a cached block; out of the free queue if it was 0.
  void touch(std::uint32_t block);
  // Count - 1; at 0 the block joins the free queue, at the back if it carries
  // an identity (evicted last), else at the front (reused first).
  void release(std::uint32_t block);
  // release() of each of `blocks`, the last one first (a request's blocks,
  // section 4's order).
  void release_reversed(std::span<const std::uint32_t> blocks);
  // Register: gives a held, anonymous block `identity` unless another block
  // holds it already (then false and the block stays anonymous).
  bool assign(std::uint32_t block, std::uint64_t identity);
  // Register along a request's blocks: blocks[j] for j in [from, to), with
  // the identities `id` walks from block `from`; a block cached already is
  // passed over, and the positions j of those left anonymous are appended to
  // `anonymous`. One group lookup serves the blocks of a group in turn.
  void assign_run(std::span<const std::uint32_t> blocks, std::uint32_t from, std::uint32_t to,
                  PromptBlocks::Cursor id, std::vector<std::uint32_t>& anonymous);

  // How many blocks share an id (Bh / B), as a hint for the map's groups;
  // it takes effect while no identity is held (the map's answers never
  // depend on it).
  void fit_groups(std::uint32_t blocks_per_id);

  // Watched blocks, for a scheduler that keeps the hit of its front waiting
  // request between steps: how many of them are free follows their counts (a
  // block watched twice, for two positions of the hit, counts twice), and
  // whether one lost its identity since clear_watch_evicted() (then the hit
  // must be walked again).
  void watch(std::uint32_t block);
  void unwatch(std::uint32_t block);
  std::uint32_t watched_free() const { return watched_free_; }
  bool watched_evicted() const { return watched_evicted_; }
  void clear_watch_evicted() { watched_evicted_ = false; }

  // Each identity stored or removed from now on is appended to `sink`, in the
  // order they happen; nullptr (the default): none.
  void record_events(std::vector<KvEvent>* sink) { events_ = sink; }

  // The tests read a block's count and identity and the free queue's order
  // (tests/unit/inspectors.hpp); nothing else needs them.
  friend struct test::PoolInspector;

 private:
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
  static constexpr std::uint32_t kNoGroup = ~std::uint32_t{0};
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  // A block: its count, its place in the free queue as an index of the ring
  // (kNotQueued when its count is not 0), when cached its slot in
  // group_block_, and the times it is watched. One cache line holds
  // everything a take, touch or release reads of a block.
  static constexpr std::uint32_t kNotQueued = ~std::uint32_t{0};
  struct Node {
    std::uint32_t count = 0;
    std::uint32_t slot = kNoSlot;
    std::uint32_t place = kNotQueued;
    std::uint32_t watched = 0;
  };
  // Whether place p of the ring is b's (else a tombstone). A ring index tells
  // places apart: the queue spans at most the ring, so two places of it share
  // an index only if they are one; the ring holds at most 2K <= 2^27 places
  // (batching_knobs.hpp's kMaxKvBlocks), so an index never reads kNotQueued.
  bool queued_at(std::uint32_t b, std::uint64_t p) const {
    return node_[b].place == static_cast<std::uint32_t>(p & ring_mask_);
  }

  // The map, two-level: identities (h, sub) in groups of W = 2^width_shift_
  // consecutive subs of one id, keyed by (h, sub div W); a group keeps its W
  // blocks side by side in group_block_. A request's blocks are registered,
  // looked up and evicted along their subs, so one probe of the group table
  // (or none: the last group found is remembered) serves up to W blocks, and
  // their slots share cache lines. A flat table over (h, sub) cost a cache
  // miss a block (spread keys) or long probe runs (keys of an id placed side
  // by side): tests/bench/README.md.
  std::uint64_t group_key(std::uint64_t identity) const {
    return (identity & 0xFFFFFFFF00000000ull) |
           (static_cast<std::uint32_t>(identity) >> width_shift_);
  }
  std::uint32_t group_of(std::uint64_t key) const;  // kNoGroup if none
  std::uint32_t add_group(std::uint64_t key);
  void remove_group(std::uint32_t group);
  void resize_table(std::size_t slots);
  static std::uint32_t tag_of(std::uint64_t key);
  std::uint32_t home(std::uint32_t tag) const { return (tag >> tag_shift_) & mask_; }
  void push_back(std::uint32_t block);
  // `n` takes, their blocks written to `to`: take() and take(n, out) alike.
  void take_into(std::uint32_t n, std::uint32_t* to);
  void make_room();
  // The identity of a group's slot (the inverse of the slot a group gives an
  // identity).
  std::uint64_t identity_at(std::uint32_t slot) const {
    const std::uint64_t key = group_key_[slot >> width_shift_];
    return (key & 0xFFFFFFFF00000000ull) | ((static_cast<std::uint32_t>(key) << width_shift_) |
                                            (slot & ((std::uint32_t{1} << width_shift_) - 1)));
  }

  std::uint32_t blocks_;
  std::uint32_t free_;
  std::uint64_t evicted_ = 0;
  std::uint64_t registrations_ = 0;
  std::vector<Node> node_;  // a block each

  // The free queue: places head_ .. tail_ - 1 of a ring (place p at
  // ring_[p & ring_mask_]), each holding a block number; a place is the
  // block's while the block's node names it, else a tombstone (the block was
  // touched out of the queue, and maybe queued again elsewhere). Taking pops
  // places from the head, skipping tombstones: a run of takes reads the ring
  // in order and fetches the nodes a few places ahead, where a linked list
  // made each take wait for the one before (a cache miss a block on a large
  // pool; tests/bench/README.md). A full ring is compacted, or doubled while
  // more than half of it is the queue: it holds at most 2K places.
  std::vector<std::uint32_t> ring_;
  std::uint64_t ring_mask_ = 0;
  std::uint64_t head_ = std::uint64_t{1} << 62;  // places count from here both ways
  std::uint64_t tail_ = std::uint64_t{1} << 62;

  unsigned width_shift_ = 5;
  std::uint32_t fitted_for_ = 32;
  std::vector<std::uint32_t> group_block_;  // W a group: the block of each sub, or kNoBlock
  std::vector<std::uint64_t> group_key_;
  // A group's cached blocks and its key's tag side by side: the eviction
  // that empties a group has its count in hand, and its tag with it, where
  // hashing its key again waited on a second cache miss.
  struct GroupState {
    std::uint32_t count = 0;
    std::uint32_t tag = 0;
  };
  std::vector<GroupState> group_state_;
  std::vector<std::uint32_t> spare_groups_;
  std::uint32_t live_groups_ = 0;
  // The group table: open addressing with linear probing, at most half full
  // (doubled as groups come), deletion by backward shift; a slot holds the
  // key's hash (upper 32 bits) over the group number, kEmpty when free.
  std::vector<std::uint64_t> table_;
  std::uint32_t mask_ = 0;
  unsigned tag_shift_ = 0;
  mutable std::uint64_t last_key_ = kNoIdentity;  // the last group found
  mutable std::uint32_t last_group_ = kNoGroup;

  std::uint32_t watched_free_ = 0;
  bool watched_evicted_ = false;
  std::vector<KvEvent>* events_ = nullptr;
};

}  // namespace infersim
