// The pending-event set behind a small interface (insert, peek, pop, empty,
// size), as a concept so the engine's hot path makes no virtual call. Three
// implementations: a binary and a 4-ary heap, and a linear scan that is
// trivially correct, against which the engine's tests check the heaps.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <vector>

#include "engine/event.hpp"

namespace infersim {

template <typename Q>
concept EventQueue = requires(Q q, const Q cq, Event e) {
  q.insert(e);
  { cq.peek() } -> std::same_as<const Event&>;
  q.pop();
  { cq.empty() } -> std::same_as<bool>;
  { cq.size() } -> std::same_as<std::size_t>;
};

// Implicit binary min-heap on EventKey in a vector.
class BinaryHeapQueue {
 public:
  void insert(const Event& e) {
    heap_.push_back(e);
    std::size_t i = heap_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!(heap_[i].key < heap_[parent].key)) break;
      std::swap(heap_[i], heap_[parent]);
      i = parent;
    }
  }
  const Event& peek() const { return heap_.front(); }
  void pop() {
    heap_.front() = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      const std::size_t left = 2 * i + 1;
      if (left >= n) break;
      std::size_t child = left;
      if (left + 1 < n && heap_[left + 1].key < heap_[left].key) child = left + 1;
      if (!(heap_[child].key < heap_[i].key)) break;
      std::swap(heap_[i], heap_[child]);
      i = child;
    }
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  std::vector<Event> heap_;
};

// Implicit 4-ary min-heap on EventKey: half the levels of a binary heap, and
// a node's four children share a cache line or two; elements move into a
// hole rather than being swapped. The heap holds size_ events of the vector's;
// growing it is out of line (a push_back's growth inline made every insert
// save six registers).
class QuaternaryHeapQueue {
 public:
  void insert(const Event& e) {
    if (size_ == heap_.size()) grow();
    std::size_t i = size_++;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(e.key < heap_[parent].key)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  const Event& peek() const { return heap_.front(); }
  void pop() {
    const std::size_t n = --size_;
    const Event last = heap_[n];
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t child = first;
      const std::size_t end = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < end; ++c) {
        if (heap_[c].key < heap_[child].key) child = c;
      }
      if (!(heap_[child].key < last.key)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void reserve(std::size_t n) {
    if (n > heap_.size()) heap_.resize(n);
  }

 private:
  [[gnu::noinline]] void grow() { heap_.resize(std::max<std::size_t>(16, 2 * heap_.size())); }
  std::vector<Event> heap_;
  std::size_t size_ = 0;
};

// Unsorted vector; peek and pop scan for the minimum. O(n), obviously right.
class LinearScanQueue {
 public:
  void insert(const Event& e) { events_.push_back(e); }
  const Event& peek() const { return *min(); }
  void pop() { events_.erase(min()); }
  bool empty() const { return events_.empty(); }
  std::size_t size() const { return events_.size(); }

 private:
  std::vector<Event>::const_iterator min() const {
    return std::min_element(events_.begin(), events_.end(),
                            [](const Event& a, const Event& b) { return a.key < b.key; });
  }
  std::vector<Event> events_;
};

static_assert(EventQueue<BinaryHeapQueue>);
static_assert(EventQueue<LinearScanQueue>);

}  // namespace infersim
