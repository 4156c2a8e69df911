#include "model/kv_block_pool.hpp"

#include <algorithm>
#include <bit>
#include <cassert>

namespace infersim {

KvBlockPool::KvBlockPool(std::uint32_t blocks) : blocks_(blocks), free_(0), node_(blocks) {
  static_assert(kBytesPerBlock == sizeof(Node) + sizeof(std::uint32_t) * 2);
  ring_.resize(std::bit_ceil(std::max<std::size_t>(blocks, 8)));
  ring_mask_ = ring_.size() - 1;
  // Queue 0..K-1 in order.
  for (std::uint32_t b = 0; b < blocks; ++b)
    push_back(b);
  resize_table(64);
}

void KvBlockPool::resize_table(std::size_t slots) {
  std::vector<std::uint64_t> old(slots, kEmpty);
  old.swap(table_);
  mask_ = static_cast<std::uint32_t>(slots - 1);
  const auto bits = static_cast<unsigned>(std::countr_zero(slots));
  tag_shift_ = bits >= 32 ? 0 : 32 - bits;
  for (const std::uint64_t s : old) {
    if (s == kEmpty) continue;
    std::uint32_t i = home(static_cast<std::uint32_t>(s >> 32));
    while (table_[i] != kEmpty)
      i = (i + 1) & mask_;
    table_[i] = s;
  }
}

std::uint32_t KvBlockPool::tag_of(std::uint64_t key) {
  // splitmix64's finalizer: group keys of consecutive ids must not crowd.
  key ^= key >> 30;
  key *= 0xBF58476D1CE4E5B9ull;
  key ^= key >> 27;
  key *= 0x94D049BB133111EBull;
  key ^= key >> 31;
  return static_cast<std::uint32_t>(key >> 32);
}

std::uint32_t KvBlockPool::group_of(std::uint64_t key) const {
  if (key == last_key_) return last_group_;
  const std::uint32_t tag = tag_of(key);
  for (std::uint32_t i = home(tag);; i = (i + 1) & mask_) {
    const std::uint64_t s = table_[i];
    if (s == kEmpty) return kNoGroup;
    const auto g = static_cast<std::uint32_t>(s);
    if (static_cast<std::uint32_t>(s >> 32) == tag && group_key_[g] == key) {
      last_key_ = key;
      last_group_ = g;
      return g;
    }
  }
}

std::uint32_t KvBlockPool::add_group(std::uint64_t key) {
  std::uint32_t g;
  if (spare_groups_.empty()) {
    g = static_cast<std::uint32_t>(group_key_.size());
    group_key_.push_back(key);
    group_state_.emplace_back();
    group_block_.resize(group_block_.size() + (std::size_t{1} << width_shift_), kNoBlock);
  } else {
    g = spare_groups_.back();
    spare_groups_.pop_back();
    group_key_[g] = key;
  }
  // At most half full: grows with the groups alive, so that the table stays
  // as small as they allow (a table for K groups would miss the cache).
  if (++live_groups_ * std::size_t{2} > table_.size()) resize_table(table_.size() * 2);
  const std::uint32_t tag = tag_of(key);
  group_state_[g].tag = tag;
  std::uint32_t i = home(tag);
  while (table_[i] != kEmpty)
    i = (i + 1) & mask_;
  table_[i] = (std::uint64_t{tag} << 32) | g;
  last_key_ = key;
  last_group_ = g;
  return g;
}

void KvBlockPool::remove_group(std::uint32_t group) {
  const std::uint32_t tag = group_state_[group].tag;
  const std::uint64_t entry = (std::uint64_t{tag} << 32) | group;
  std::uint32_t hole = home(tag);
  while (table_[hole] != entry)
    hole = (hole + 1) & mask_;
  // Backward shift: move later entries of the run into the hole while their
  // home does not lie cyclically in (hole, j].
  for (std::uint32_t j = (hole + 1) & mask_;; j = (j + 1) & mask_) {
    const std::uint64_t s = table_[j];
    if (s == kEmpty) break;
    const std::uint32_t h = home(static_cast<std::uint32_t>(s >> 32));
    if (((j - h) & mask_) >= ((j - hole) & mask_)) {
      table_[hole] = s;
      hole = j;
    }
  }
  table_[hole] = kEmpty;
  spare_groups_.push_back(group);
  --live_groups_;
  if (last_group_ == group) last_key_ = kNoIdentity;
}

void KvBlockPool::fit_groups(std::uint32_t blocks_per_id) {
  if (blocks_per_id == fitted_for_ || live_groups_ != 0) return;
  fitted_for_ = blocks_per_id;
  // W = the power of two at or above Bh / B, at most 32.
  width_shift_ =
      blocks_per_id >= 32
          ? 5
          : static_cast<unsigned>(std::bit_width(std::max<std::uint32_t>(blocks_per_id, 1) - 1));
  group_block_.clear();
  group_key_.clear();
  group_state_.clear();
  spare_groups_.clear();
  last_key_ = kNoIdentity;
}

std::uint32_t KvBlockPool::find(std::uint64_t identity) const {
  const std::uint32_t g = group_of(group_key(identity));
  if (g == kNoGroup) return kNoBlock;
  const std::uint32_t sub = static_cast<std::uint32_t>(identity) & ((1u << width_shift_) - 1);
  return group_block_[(std::size_t{g} << width_shift_) | sub];
}

bool KvBlockPool::assign(std::uint32_t block, std::uint64_t identity) {
  assert(node_[block].slot == kNoSlot && node_[block].count > 0);
  const std::uint64_t key = group_key(identity);
  std::uint32_t g = group_of(key);
  if (g == kNoGroup) g = add_group(key);
  const std::uint32_t sub = static_cast<std::uint32_t>(identity) & ((1u << width_shift_) - 1);
  const std::uint32_t slot = (g << width_shift_) | sub;
  if (group_block_[slot] != kNoBlock) return false;
  group_block_[slot] = block;
  ++group_state_[g].count;
  node_[block].slot = slot;
  ++registrations_;
  if (events_) events_->push_back({identity, true});
  return true;
}

void KvBlockPool::assign_run(std::span<const std::uint32_t> blocks, std::uint32_t from,
                             std::uint32_t to, PromptBlocks::Cursor id,
                             std::vector<std::uint32_t>& anonymous) {
  // A group at a time: the blocks from j whose identities share its key (one
  // id, subs up to the group's end) are assigned with one lookup, the group
  // added only when one of them is assigned (as assign() would). The group's
  // slots and count in registers while it is filled (add_group may move the
  // arrays; nothing else here does).
  const unsigned width_shift = width_shift_;
  const std::uint32_t width = 1u << width_shift;
  Node* const node = node_.data();
  std::vector<KvEvent>* const events = events_;
  std::uint64_t registrations = 0;
  for (std::uint32_t j = from; j < to;) {
    const std::uint64_t identity = *id;
    const auto sub = static_cast<std::uint32_t>(identity) & (width - 1);
    const std::uint32_t run = std::min({to - j, id.left_in_id(), width - sub});
    const std::uint64_t key = group_key(identity);
    std::uint32_t g = group_of(key);
    // The slot of the run's first block: block k of the run goes to first + k.
    std::uint32_t first = (g << width_shift) | sub;
    std::uint32_t* slots = g == kNoGroup ? nullptr : group_block_.data() + first;
    std::uint32_t added = 0;
    for (std::uint32_t k = 0; k < run; ++k) {
      const std::uint32_t b = blocks[j + k];
      Node& n = node[b];
      if (n.slot != kNoSlot) continue;  // cached already
      if (slots == nullptr) {
        g = add_group(key);
        first = (g << width_shift) | sub;
        slots = group_block_.data() + first;
      }
      if (slots[k] != kNoBlock) {
        anonymous.push_back(j + k);
        continue;
      }
      slots[k] = b;
      n.slot = first + k;
      ++added;
      if (events) events->push_back({identity + k, true});
    }
    if (added != 0) group_state_[g].count += added;
    registrations += added;
    j += run;
    id.skip(run);
  }
  registrations_ += registrations;
}

void KvBlockPool::push_back(std::uint32_t block) {
  if (tail_ - head_ == ring_.size()) make_room();
  ring_[tail_ & ring_mask_] = block;
  node_[block].place = static_cast<std::uint32_t>(tail_++ & ring_mask_);
  ++free_;
}

void KvBlockPool::make_room() {
  // The queue's blocks, in order, renumbered from head_; twice the ring when
  // they fill more than half of it (so a compaction frees at least half).
  std::vector<std::uint32_t> queue;
  queue.reserve(free_);
  for (std::uint64_t p = head_; p != tail_; ++p) {
    const std::uint32_t b = ring_[p & ring_mask_];
    if (queued_at(b, p)) queue.push_back(b);
  }
  if (std::size_t{free_} * 2 > ring_.size()) {
    ring_.assign(ring_.size() * 2, 0);
    ring_mask_ = ring_.size() - 1;
  }
  tail_ = head_;
  for (const std::uint32_t b : queue) {
    ring_[tail_ & ring_mask_] = b;
    node_[b].place = static_cast<std::uint32_t>(tail_++ & ring_mask_);
  }
}

std::uint32_t KvBlockPool::take() {
  std::uint32_t b;
  take_into(1, &b);
  return b;
}

void KvBlockPool::take(std::uint32_t n, std::vector<std::uint32_t>& out) {
  const std::size_t first = out.size();
  out.resize(first + n);
  take_into(n, out.data() + first);
}

void KvBlockPool::take_into(std::uint32_t n, std::uint32_t* to) {
  assert(free_ >= n);
  // Each take pops the head of the queue, skipping tombstones. The pool's
  // arrays, the head and the sums stay in registers across a run (nothing here
  // moves the arrays: remove_group neither) rather than being reloaded at
  // every block, which a store to a node forces on members.
  const std::uint32_t* const ring = ring_.data();
  const std::uint64_t mask = ring_mask_;
  Node* const node = node_.data();
  std::uint32_t* const group_block = group_block_.data();
  GroupState* const group_state = group_state_.data();
  const unsigned width_shift = width_shift_;
  std::vector<KvEvent>* const events = events_;
  std::uint64_t head = head_;
  std::uint64_t evicted = 0;
  std::uint32_t watched = 0;
  bool watched_evicted = false;
  for (std::uint32_t k = 0; k < n; ++k) {
    auto at = static_cast<std::uint32_t>(head & mask);
    std::uint32_t b = ring[at];
    while (node[b].place != at) {  // a tombstone
      at = static_cast<std::uint32_t>(++head & mask);
      b = ring[at];
    }
    ++head;
    // The run's nodes lie anywhere in the pool: fetch one a few places on.
    constexpr std::uint64_t kAhead = 8;
    __builtin_prefetch(&node[ring[(head + kAhead) & mask]]);
    Node& nd = node[b];
    nd.place = kNotQueued;
    nd.count = 1;
    const std::uint32_t slot = nd.slot;
    if (nd.watched != 0) {
      watched += nd.watched;
      watched_evicted = watched_evicted || slot != kNoSlot;
    }
    if (slot != kNoSlot) {
      if (events) events->push_back({identity_at(slot), false});
      group_block[slot] = kNoBlock;
      const std::uint32_t g = slot >> width_shift;
      if (--group_state[g].count == 0) remove_group(g);
      nd.slot = kNoSlot;
      ++evicted;
    }
    to[k] = b;
  }
  head_ = head;
  free_ -= n;
  evicted_ += evicted;
  watched_free_ -= watched;
  watched_evicted_ = watched_evicted_ || watched_evicted;
}

void KvBlockPool::touch(std::uint32_t block) {
  Node& n = node_[block];
  if (n.count++ == 0) {
    n.place = kNotQueued;  // its place in the ring is a tombstone now
    --free_;
    watched_free_ -= n.watched;
  }
}

void KvBlockPool::release(std::uint32_t block) {
  release_reversed(std::span<const std::uint32_t>(&block, 1));
}

void KvBlockPool::release_reversed(std::span<const std::uint32_t> blocks) {
  // Count - 1 of each; at 0 the block joins the queue. The ring's ends and the
  // nodes stay in registers (written back around the rare make_room). A
  // request's blocks lie anywhere in the pool: their nodes are fetched a few
  // ahead.
  constexpr std::size_t kAhead = 8;
  Node* const node = node_.data();
  std::uint32_t* ring = ring_.data();
  std::uint64_t mask = ring_mask_;
  std::uint64_t head = head_, tail = tail_;
  std::uint32_t freed = 0, watched = 0;
  // A ring with room for every block needs no test of it a block.
  const bool roomy = (mask + 1) - (tail - head) >= blocks.size();
  for (std::size_t k = blocks.size(); k > 0; --k) {
    if (k > kAhead) __builtin_prefetch(&node[blocks[k - 1 - kAhead]]);
    const std::uint32_t b = blocks[k - 1];
    Node& n = node[b];
    assert(n.count > 0);
    if (--n.count != 0) continue;
    if (!roomy && tail - head == mask + 1) {
      head_ = head;
      tail_ = tail;
      free_ += freed;
      freed = 0;
      make_room();
      ring = ring_.data();
      mask = ring_mask_;
      head = head_;
      tail = tail_;
    }
    // At the back if it carries an identity (evicted last), else at the front.
    const std::uint64_t place = n.slot != kNoSlot ? tail++ : --head;
    ring[place & mask] = b;
    n.place = static_cast<std::uint32_t>(place & mask);
    ++freed;
    watched += n.watched;
  }
  head_ = head;
  tail_ = tail;
  free_ += freed;
  watched_free_ += watched;
}

void KvBlockPool::watch(std::uint32_t block) {
  ++node_[block].watched;
  if (node_[block].count == 0) ++watched_free_;
}

void KvBlockPool::unwatch(std::uint32_t block) {
  assert(node_[block].watched > 0);
  --node_[block].watched;
  if (node_[block].count == 0) --watched_free_;
}

}  // namespace infersim
