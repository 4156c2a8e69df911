// Hands what a model tells to its observers: at once, on the model's thread,
// or, once start_thread() is called, through a ring of batches to a second
// thread that calls them while the model runs ahead. Either way every
// observer sees the same calls in the same order, so the results do not
// depend on it; the second thread only puts the other core to work.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "model/request_observer.hpp"

namespace infersim {

class ObserverRelay {
 public:
  ObserverRelay() = default;
  ObserverRelay(const ObserverRelay&) = delete;
  ObserverRelay& operator=(const ObserverRelay&) = delete;
  ~ObserverRelay();

  void add(RequestObserver& observer) {
    observers_.push_back(&observer);
    if (observer.wants_completions()) completions_.push_back(&observer);
  }
  bool empty() const { return observers_.empty(); }
  // Some observer wants on_completed.
  bool wants_completions() const { return !completions_.empty(); }

  // From now until finish(), observers are called on a second thread.
  void start_thread();
  // Every notice delivered; the second thread, if any, joined. Rethrows what
  // an observer threw.
  void finish();

  void issued(std::uint64_t id, const Request& task, const RequestOutcome& outcome) {
    if (!threaded_) {
      for (RequestObserver* observer : observers_)
        observer->on_issued(id, task, outcome);
      return;
    }
    put({id, false, task, outcome});
  }
  void completed(std::uint64_t id, const Request& task, const RequestOutcome& outcome) {
    if (completions_.empty()) return;
    if (!threaded_) {
      for (RequestObserver* observer : completions_)
        observer->on_completed(id, task, outcome);
      return;
    }
    put({id, true, task, outcome});
  }

 private:
  struct Notice {
    std::uint64_t id;
    bool completed;
    Request task;
    RequestOutcome outcome;
  };
  // kBlocks batches of kBlock notices: the model fills one while the second
  // thread reads the others.
  static constexpr std::size_t kBlock = 512;
  static constexpr std::size_t kBlocks = 8;

  void put(const Notice& notice) {
    ring_[(written_ % kBlocks) * kBlock + fill_] = notice;
    if (++fill_ == kBlock) publish();
  }
  void publish();  // the block being filled, to the second thread
  void close();    // publishes the last block and joins the second thread
  // Waits until `value` is no longer `seen`, or `or_set` is set; returns it.
  std::uint64_t wait_for_change(const std::atomic<std::uint64_t>& value, std::uint64_t seen,
                                const std::atomic<bool>* or_set = nullptr);
  void wake();     // after a store the other thread may wait for
  void consume();  // the second thread's loop

  std::vector<RequestObserver*> observers_;
  std::vector<RequestObserver*> completions_;  // those that want on_completed
  bool threaded_ = false;
  std::vector<Notice> ring_;
  std::vector<std::size_t> counts_;  // notices in each block of the ring
  std::size_t fill_ = 0;             // notices in the block being filled
  std::uint64_t written_ = 0;        // blocks published (the model's own count)
  std::atomic<std::uint64_t> published_{0};
  std::atomic<std::uint64_t> consumed_{0};
  std::atomic<bool> closed_{false};  // no block after the published ones
  // Where a thread sleeps once spinning is long enough (std::atomic::wait of
  // GCC 12 may lose a wake-up when two atomics share its waiter slot).
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  std::exception_ptr failure_;  // set by the second thread
  std::thread consumer_;
};

}  // namespace infersim
