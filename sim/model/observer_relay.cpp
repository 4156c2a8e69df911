#include "model/observer_relay.hpp"

#include <utility>

namespace infersim {
std::uint64_t ObserverRelay::wait_for_change(const std::atomic<std::uint64_t>& value,
                                             std::uint64_t seen, const std::atomic<bool>* or_set) {
  // Spinning a while first: the other side usually moves within
  // microseconds, and putting a thread to sleep and waking it costs far more
  // than that on a virtual machine.
  for (int spin = 0; spin < 20000; ++spin) {
    const std::uint64_t now = value.load(std::memory_order_acquire);
    if (now != seen || (or_set && or_set->load(std::memory_order_acquire))) return now;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::unique_lock lock(sleep_mutex_);
  wake_.wait(lock, [&] {
    return value.load(std::memory_order_acquire) != seen ||
           (or_set && or_set->load(std::memory_order_acquire));
  });
  return value.load(std::memory_order_acquire);
}

void ObserverRelay::wake() {
  // Taking the mutex orders this after a sleeper's last look at the value.
  { const std::lock_guard lock(sleep_mutex_); }
  wake_.notify_all();
}

ObserverRelay::~ObserverRelay() {
  if (consumer_.joinable()) close();
}

void ObserverRelay::close() {
  // The block being filled goes last, even empty, so that the second thread
  // wakes; then it may stop.
  counts_[written_ % kBlocks] = fill_;
  fill_ = 0;
  published_.store(++written_, std::memory_order_release);
  closed_.store(true, std::memory_order_release);
  wake();
  consumer_.join();
  threaded_ = false;
}

void ObserverRelay::start_thread() {
  if (threaded_ || observers_.empty()) return;
  ring_.resize(kBlock * kBlocks);
  counts_.assign(kBlocks, 0);
  threaded_ = true;
  consumer_ = std::thread([this] { consume(); });
}

void ObserverRelay::publish() {
  // Wait until the block after this one is free before moving to it.
  counts_[written_ % kBlocks] = fill_;
  ++written_;
  published_.store(written_, std::memory_order_release);
  wake();
  fill_ = 0;
  for (std::uint64_t done = consumed_.load(std::memory_order_acquire); written_ - done >= kBlocks;
       done = wait_for_change(consumed_, done)) {
  }
}

void ObserverRelay::consume() {
  std::uint64_t next = 0;
  for (;;) {
    std::uint64_t ready = published_.load(std::memory_order_acquire);
    while (next == ready) {
      if (closed_.load(std::memory_order_acquire)) {
        ready = published_.load(std::memory_order_acquire);
        if (next == ready) return;
        break;
      }
      // Closing publishes its last block before it says so: wake on either.
      ready = wait_for_change(published_, ready, &closed_);
    }
    for (; next < ready; ++next) {
      const std::size_t block = next % kBlocks;
      if (!failure_) {
        try {
          const Notice* notice = &ring_[block * kBlock];
          for (std::size_t i = 0; i < counts_[block]; ++i, ++notice) {
            if (notice->completed) {
              for (RequestObserver* observer : completions_)
                observer->on_completed(notice->id, notice->task, notice->outcome);
            } else {
              for (RequestObserver* observer : observers_)
                observer->on_issued(notice->id, notice->task, notice->outcome);
            }
          }
        } catch (...) {
          // Later notices are let go; finish() rethrows this.
          failure_ = std::current_exception();
        }
      }
      consumed_.store(next + 1, std::memory_order_release);
      wake();
    }
  }
}

void ObserverRelay::finish() {
  if (!threaded_) return;
  close();
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

}  // namespace infersim
