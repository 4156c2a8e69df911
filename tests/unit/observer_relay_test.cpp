// The relay on a second thread: the calls of the model's thread, in order,
// across many batches and a last partial one; what an observer throws comes
// back from finish(); a relay dropped while running delivers and stops.
#include "model/observer_relay.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace infersim {
namespace {

class Ids : public RequestObserver {
 public:
  void on_issued(std::uint64_t id, const Request&, const RequestOutcome&) override {
    calls.push_back(static_cast<std::int64_t>(id));
    thread = std::this_thread::get_id();
  }
  void on_completed(std::uint64_t id, const Request&, const RequestOutcome&) override {
    calls.push_back(-static_cast<std::int64_t>(id));
  }
  std::vector<std::int64_t> calls;
  std::thread::id thread;
};

class ThrowsAt : public RequestObserver {
 public:
  explicit ThrowsAt(std::uint64_t id) : id_(id) {}
  void on_issued(std::uint64_t id, const Request&, const RequestOutcome&) override {
    if (id == id_) throw std::logic_error("observer failed at " + std::to_string(id));
  }
  bool wants_completions() const override { return false; }

 private:
  std::uint64_t id_;
};

TEST(ObserverRelay, ASecondThreadMakesTheSameCallsInOrder) {
  for (const std::uint64_t n : {0u, 1u, 511u, 512u, 513u, 20000u}) {
    Ids direct, threaded;
    ObserverRelay a, b;
    a.add(direct);
    b.add(threaded);
    b.start_thread();
    for (std::uint64_t k = 0; k < n; ++k) {
      for (ObserverRelay* relay : {&a, &b}) {
        relay->issued(k, Request{}, RequestOutcome{});
        if (k % 3 == 0) relay->completed(k, Request{}, RequestOutcome{});
      }
    }
    a.finish();
    b.finish();
    EXPECT_EQ(threaded.calls, direct.calls) << n;
    if (n > 0) {
      EXPECT_NE(threaded.thread, std::this_thread::get_id());
    }
  }
}

// Closing while the second thread is between its last look and its sleep:
// many short relays, so that every interleaving has its turn.
TEST(ObserverRelay, ClosingNeverLeavesTheSecondThreadWaiting) {
  for (std::uint64_t round = 0; round < 2000; ++round) {
    Ids ids;
    ObserverRelay relay;
    relay.add(ids);
    relay.start_thread();
    const std::uint64_t n = (round % 3) * 512 + round % 2;
    for (std::uint64_t k = 0; k < n; ++k)
      relay.issued(k, Request{}, RequestOutcome{});
    relay.finish();
    ASSERT_EQ(ids.calls.size(), n) << round;
  }
}

TEST(ObserverRelay, WhatAnObserverThrowsComesBackFromFinish) {
  ThrowsAt fails(5000);
  ObserverRelay relay;
  relay.add(fails);
  relay.start_thread();
  for (std::uint64_t k = 0; k < 20000; ++k)
    relay.issued(k, Request{}, RequestOutcome{});
  EXPECT_THROW(relay.finish(), std::logic_error);
}

TEST(ObserverRelay, ADroppedRelayStopsItsThread) {
  Ids ids;
  {
    ObserverRelay relay;
    relay.add(ids);
    relay.start_thread();
    for (std::uint64_t k = 0; k < 3000; ++k)
      relay.issued(k, Request{}, RequestOutcome{});
  }  // no finish(): the destructor delivers what was put and joins
  EXPECT_EQ(ids.calls.size(), 3000u);
}

}  // namespace
}  // namespace infersim
