// The KV cache of one batching replica (BATCHING.md section 4): K blocks with
// reference counts and at most one identity each, the free queue (every block
// whose count is 0, in order) and the map from identity to cached block. Every
// operation is O(1): the free queue is an intrusive doubly-linked list, the
// map an open-addressing table, the free and used counts counters.
#pragma once

#include <cstdint>
#include <vector>

namespace infersim {

class KvBlockPool {
 public:
  static constexpr std::uint32_t kNoBlock = ~std::uint32_t{0};
  // No (h, sub) packs to it: sub < Bh / B < 2^32 - 1 (block_identity.hpp).
  static constexpr std::uint64_t kNoIdentity = ~std::uint64_t{0};

  // Blocks 0..blocks-1, all free and anonymous, queued in that order.
  explicit KvBlockPool(std::uint32_t blocks);

  std::uint32_t blocks() const { return blocks_; }
  std::uint32_t free_blocks() const { return free_; }            // count 0 (cached ones included)
  std::uint32_t used_blocks() const { return blocks_ - free_; }  // count >= 1
  std::uint64_t evicted() const { return evicted_; }             // identities lost by taken blocks
  // Identities given so far (Register); a change says the map may have grown.
  std::uint64_t registrations() const { return registrations_; }

  std::uint32_t count(std::uint32_t block) const { return node_[block].count; }
  bool cached(std::uint32_t block) const { return identity_[block] != kNoIdentity; }
  std::uint64_t identity(std::uint32_t block) const { return identity_[block]; }
  // The block holding `identity`, or kNoBlock.
  std::uint32_t find(std::uint64_t identity) const;

  // Pops the head of the free queue (free_blocks() >= 1) with count 1; the
  // block loses its identity if it had one (an eviction).
  std::uint32_t take();
  // Count + 1 of a cached block; out of the free queue if it was 0.
  void touch(std::uint32_t block);
  // Count - 1; at 0 the block joins the free queue, at the back if it carries
  // an identity (evicted last), else at the front (reused first).
  void release(std::uint32_t block);
  // Register: gives a held, anonymous block `identity` unless another block
  // holds it already (then false and the block stays anonymous).
  bool assign(std::uint32_t block, std::uint64_t identity);

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

  // The free queue from head to back, by walking it (tests only).
  std::vector<std::uint32_t> free_queue() const;

 private:
  // A block's place in the free queue (node blocks_ is the list's sentinel:
  // its next is the head, its prev the back) and its count.
  struct Node {
    std::uint32_t count = 0;
    std::uint32_t prev = 0;
    std::uint32_t next = 0;
    std::uint32_t watched = 0;  // times watched
  };
  void unlink(std::uint32_t block);
  void link_after(std::uint32_t at, std::uint32_t block);
  std::uint32_t home(std::uint64_t identity) const;
  void erase_slot(std::uint32_t slot);

  std::uint32_t blocks_;
  std::uint32_t free_;
  std::uint64_t evicted_ = 0;
  std::uint64_t registrations_ = 0;
  std::uint32_t watched_free_ = 0;
  bool watched_evicted_ = false;
  std::vector<Node> node_;               // blocks_ + 1 (the sentinel)
  std::vector<std::uint64_t> identity_;  // kNoIdentity: anonymous
  // The identity map: linear probing over block numbers (kNoBlock: empty),
  // compared through identity_, at most half full (it never holds more than K
  // identities), deletion by backward shift. Four bytes a slot keep all of it
  // in cache; std::unordered_map cost a node allocation an insertion and a
  // pointer chase a lookup (tests/bench/README.md has the comparison).
  std::vector<std::uint32_t> slot_;
  // Where each cached block sits in slot_, so an eviction erases it without a
  // probe.
  std::vector<std::uint32_t> slot_of_;
  std::uint32_t mask_ = 0;
  unsigned shift_ = 0;
};

}  // namespace infersim
