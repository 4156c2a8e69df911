// A min-priority queue made for values that come nearly in order (instants a
// model emits in issue order): a value no smaller than the last goes to the
// end of a sorted run, one a little smaller is inserted into the run near its
// end, and any other waits in a binary heap beside it. In order, each value
// costs O(1); in any order, O(log n), never the O(n) of a long insertion.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace infersim {

template <class T>
class SortedQueue {
 public:
  bool empty() const { return size() == 0; }
  std::size_t size() const { return run_.size() - head_ + heap_.size(); }
  // The smallest value; the queue must not be empty.
  const T& front() const { return from_run() ? run_[head_] : heap_.front(); }

  void push(const T& value) {
    if (head_ == run_.size() || !(value < run_.back())) {
      run_.push_back(value);
      return;
    }
    const auto begin = run_.begin() + static_cast<std::ptrdiff_t>(head_);
    const auto tail = run_.end() - std::min<std::ptrdiff_t>(run_.end() - begin, kNearEnd);
    if (!(value < *tail)) {
      run_.insert(std::upper_bound(tail, run_.end(), value), value);
      return;
    }
    heap_.push_back(value);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }

  // Removes the smallest value; the queue must not be empty.
  void pop() {
    if (!from_run()) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      heap_.pop_back();
      return;
    }
    ++head_;
    if (head_ == run_.size()) {
      run_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAt && 2 * head_ >= run_.size()) {
      run_.erase(run_.begin(), run_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  // How far from the run's end a value is still inserted into it.
  static constexpr std::ptrdiff_t kNearEnd = 32;
  // The taken front of the run is dropped once it is this long and half of it.
  static constexpr std::size_t kCompactAt = 4096;

  bool from_run() const {
    if (head_ == run_.size()) return false;
    return heap_.empty() || !(heap_.front() < run_[head_]);
  }

  std::vector<T> run_;  // sorted; [head_, end) still queued
  std::size_t head_ = 0;
  std::vector<T> heap_;  // min-heap of the values that came far out of order
};

}  // namespace infersim
