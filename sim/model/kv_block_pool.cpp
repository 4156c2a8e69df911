#include "model/kv_block_pool.hpp"

#include <bit>
#include <cassert>

namespace infersim {

KvBlockPool::KvBlockPool(std::uint32_t blocks)
    : blocks_(blocks),
      free_(blocks),
      node_(std::size_t{blocks} + 1),
      identity_(blocks, kNoIdentity),
      slot_of_(blocks, kNoBlock) {
  // Queue 0..K-1 in order behind the sentinel K.
  for (std::uint32_t b = 0; b <= blocks; ++b) {
    node_[b].prev = b == 0 ? blocks : b - 1;
    node_[b].next = b == blocks ? 0 : b + 1;
  }
  // At least 2K slots, a power of two.
  const std::size_t slots = std::bit_ceil(std::size_t{2} * blocks + 2);
  slot_.assign(slots, kNoBlock);
  mask_ = static_cast<std::uint32_t>(slots - 1);
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(slots));
}

std::uint32_t KvBlockPool::home(std::uint64_t identity) const {
  // Fibonacci hashing: the product's top bits depend on every bit of the key.
  return static_cast<std::uint32_t>((identity * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
}

std::uint32_t KvBlockPool::find(std::uint64_t identity) const {
  for (std::uint32_t i = home(identity);; i = (i + 1) & mask_) {
    const std::uint32_t b = slot_[i];
    if (b == kNoBlock || identity_[b] == identity) return b;
  }
}

void KvBlockPool::erase_slot(std::uint32_t hole) {
  // Backward shift: move later entries of the run into the hole while their
  // home does not lie cyclically in (hole, j].
  for (std::uint32_t j = (hole + 1) & mask_;; j = (j + 1) & mask_) {
    const std::uint32_t b = slot_[j];
    if (b == kNoBlock) break;
    const std::uint32_t h = home(identity_[b]);
    if (((j - h) & mask_) >= ((j - hole) & mask_)) {
      slot_[hole] = b;
      slot_of_[b] = hole;
      hole = j;
    }
  }
  slot_[hole] = kNoBlock;
}

bool KvBlockPool::assign(std::uint32_t block, std::uint64_t identity) {
  assert(identity_[block] == kNoIdentity && node_[block].count > 0);
  std::uint32_t i = home(identity);
  for (;; i = (i + 1) & mask_) {
    const std::uint32_t b = slot_[i];
    if (b == kNoBlock) break;
    if (identity_[b] == identity) return false;
  }
  slot_[i] = block;
  slot_of_[block] = i;
  identity_[block] = identity;
  ++registrations_;
  return true;
}

void KvBlockPool::unlink(std::uint32_t block) {
  Node& n = node_[block];
  node_[n.prev].next = n.next;
  node_[n.next].prev = n.prev;
}

void KvBlockPool::link_after(std::uint32_t at, std::uint32_t block) {
  const std::uint32_t next = node_[at].next;
  node_[block].prev = at;
  node_[block].next = next;
  node_[at].next = block;
  node_[next].prev = block;
}

std::uint32_t KvBlockPool::take() {
  assert(free_ > 0);
  const std::uint32_t b = node_[blocks_].next;
  unlink(b);
  --free_;
  Node& n = node_[b];
  n.count = 1;
  if (n.watched != 0) {
    watched_free_ -= n.watched;
    if (identity_[b] != kNoIdentity) watched_evicted_ = true;
  }
  if (identity_[b] != kNoIdentity) {
    erase_slot(slot_of_[b]);
    identity_[b] = kNoIdentity;
    ++evicted_;
  }
  return b;
}

void KvBlockPool::touch(std::uint32_t block) {
  Node& n = node_[block];
  if (n.count++ == 0) {
    unlink(block);
    --free_;
    watched_free_ -= n.watched;
  }
}

void KvBlockPool::release(std::uint32_t block) {
  Node& n = node_[block];
  assert(n.count > 0);
  if (--n.count == 0) {
    link_after(identity_[block] != kNoIdentity ? node_[blocks_].prev : blocks_, block);
    ++free_;
    watched_free_ += n.watched;
  }
}

void KvBlockPool::watch(std::uint32_t block) {
  Node& n = node_[block];
  ++n.watched;
  if (n.count == 0) ++watched_free_;
}

void KvBlockPool::unwatch(std::uint32_t block) {
  Node& n = node_[block];
  assert(n.watched > 0);
  --n.watched;
  if (n.count == 0) --watched_free_;
}

std::vector<std::uint32_t> KvBlockPool::free_queue() const {
  std::vector<std::uint32_t> queue;
  for (std::uint32_t b = node_[blocks_].next; b != blocks_; b = node_[b].next)
    queue.push_back(b);
  return queue;
}

}  // namespace infersim
