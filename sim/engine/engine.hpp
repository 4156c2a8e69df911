// The discrete-event engine: a clock and a pending-event set. run() pops events
// in (time, phase, seq) order and hands each to the model's dispatch function,
// which may schedule more. Causality is checked on every schedule call.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "engine/event_queue.hpp"

namespace infersim {

class CausalityError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

template <EventQueue Queue = QuaternaryHeapQueue>
class Engine {
 public:
  SimTime now() const { return now_; }
  std::uint64_t executed() const { return executed_; }
  std::size_t pending() const { return queue_.size(); }
  Queue& queue() { return queue_; }
  // The key of the earliest pending event (none when none is pending).
  const EventKey* next_key() const { return queue_.empty() ? nullptr : &queue_.peek().key; }

  void schedule_at(SimTime at, Phase phase, std::uint32_t kind, std::uint64_t subject) {
    if (at < now_) throw_before_clock(at, now_);
    if (next_seq_ >> EventKey::kSeqBits) throw_too_many();
    queue_.insert(Event{EventKey{at, phase, next_seq_++}, kind, subject});
  }

  void schedule_in(Duration delay, Phase phase, std::uint32_t kind, std::uint64_t subject) {
    if (delay < Duration::zero()) {
      throw CausalityError("negative delay of " + std::to_string(delay.count_ns()) + " ns");
    }
    schedule_at(now_ + delay, phase, kind, subject);
  }

  // Runs until no event is left. dispatch(const Event&) is called with the
  // clock already at the event's time.
  template <typename Dispatch>
  void run(Dispatch&& dispatch) {
    while (step(dispatch)) {
    }
  }

  // Executes the earliest event, if any; false when none is left.
  template <typename Dispatch>
  bool step(Dispatch&& dispatch) {
    if (queue_.empty()) return false;
    const Event event = queue_.peek();
    queue_.pop();
    now_ = event.key.time;
    ++executed_;
    dispatch(event);
    return true;
  }

 private:
  // The errors out of line: built inline, their messages made every
  // schedule_at save six registers and kept it from being inlined.
  [[noreturn, gnu::cold, gnu::noinline]] static void throw_before_clock(SimTime at, SimTime now) {
    throw CausalityError("event scheduled at " + std::to_string(at.count_ns()) +
                         " ns, before the clock at " + std::to_string(now.count_ns()) + " ns");
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void throw_too_many() {
    throw std::length_error("more than 2^56 events");
  }

  Queue queue_;
  SimTime now_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t executed_ = 0;
};

}  // namespace infersim
