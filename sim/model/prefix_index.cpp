#include "model/prefix_index.hpp"

#include <algorithm>
#include <cmath>

#include "model/replica_scheduler.hpp"

namespace infersim {

PrefixIndex::PrefixIndex(PrefixIndexKind kind, double event_delay_s, std::int64_t capacity_blocks)
    : kind_(kind), capacity_(static_cast<std::size_t>(std::max<std::int64_t>(1, capacity_blocks))) {
  if (kind == PrefixIndexKind::kPrecise && event_delay_s > 0) {
    delay_ = Duration::ns(std::max<std::int64_t>(1, std::llround(event_delay_s * 1e9)));
  }
}

void PrefixIndex::event(std::uint32_t replica, const KvEvent& e) {
  if (!delay_) return;
  if (replica >= known_.size()) known_.resize(replica + 1);
  std::unordered_set<std::uint64_t>& known = known_[replica];
  if (e.identity == kCleared) {
    known.clear();
  } else if (e.stored) {
    known.insert(e.identity);
  } else {
    known.erase(e.identity);
  }
}

bool PrefixIndex::holds(std::uint32_t replica, std::uint64_t identity) const {
  if (kind_ == PrefixIndexKind::kApproximate) {
    return replica < lru_.size() && lru_[replica].last.contains(identity);
  }
  return replica < known_.size() && known_[replica].contains(identity);
}

std::uint32_t PrefixIndex::hit_blocks(const ReplicaScheduler& s, const BatchedRequest& r) const {
  if (kind_ == PrefixIndexKind::kPrecise && !delay_) return s.hit_blocks(r);
  const std::uint32_t cap = s.hit_cap(r);
  std::uint32_t h = 0;
  if (cap == 0) return 0;
  for (auto id = r.prompt_blocks.cursor(0); h < cap && holds(s.index(), *id); id.next())
    ++h;
  return h;
}

void PrefixIndex::routed(const ReplicaScheduler& s, const BatchedRequest& r) {
  if (kind_ != PrefixIndexKind::kApproximate || r.prompt_blocks.count() == 0) return;
  if (s.index() >= lru_.size()) lru_.resize(s.index() + 1);
  Lru& lru = lru_[s.index()];
  auto id = r.prompt_blocks.cursor(0);
  for (std::uint32_t j = 0; j < r.prompt_blocks.count(); ++j, id.next()) {
    const std::uint64_t use = ++lru.clock;
    lru.last[*id] = use;
    lru.uses.emplace_back(use, *id);
  }
  // The least recently used go past the capacity.
  while (lru.last.size() > capacity_) {
    const auto [use, identity] = lru.uses.front();
    lru.uses.pop_front();
    const auto at = lru.last.find(identity);
    if (at != lru.last.end() && at->second == use) lru.last.erase(at);
  }
  // Uses outlived by later ones, dropped when they outnumber the live ones.
  if (lru.uses.size() > 4 * std::max<std::size_t>(lru.last.size(), 1024)) {
    std::deque<std::pair<std::uint64_t, std::uint64_t>> live;
    for (const auto& u : lru.uses) {
      if (lru.last.at(u.second) == u.first) live.push_back(u);
    }
    lru.uses.swap(live);
  }
}

}  // namespace infersim
