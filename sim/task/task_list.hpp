// The tasks of a run in issue order, kept compact: an arrival and two token
// counts a task (24 bytes), the costs and the deadline derived by make_task
// with the list's knobs whenever a task is read. A week of traffic is millions
// of tasks; the derived fields would triple what they hold.
#pragma once

#include <cstddef>
#include <iterator>
#include <vector>

#include "task/task.hpp"

namespace infersim {

class TaskList {
 public:
  TaskList() = default;
  explicit TaskList(TaskKnobs knobs) : knobs_(knobs) {}

  // Reserves room for n tasks, on huge pages when the system gives them.
  void reserve(std::size_t n);
  void add(SimTime arrival, double context_tokens, double generated_tokens) {
    arrival_ns_.push_back(arrival.count_ns());
    context_tokens_.push_back(context_tokens);
    generated_tokens_.push_back(generated_tokens);
  }
  void pop_back() {
    arrival_ns_.pop_back();
    context_tokens_.pop_back();
    generated_tokens_.pop_back();
  }
  void clear();

  std::size_t size() const { return arrival_ns_.size(); }
  bool empty() const { return arrival_ns_.empty(); }
  SimTime arrival(std::size_t k) const { return SimTime::ns(arrival_ns_[k]); }
  double context_tokens(std::size_t k) const { return context_tokens_[k]; }
  double generated_tokens(std::size_t k) const { return generated_tokens_[k]; }
  // Task k, derived (MODEL.md section 5).
  Task operator[](std::size_t k) const {
    return make_task(arrival(k), context_tokens_[k], generated_tokens_[k], knobs_);
  }
  Task front() const { return (*this)[0]; }
  Task back() const { return (*this)[size() - 1]; }
  const TaskKnobs& knobs() const { return knobs_; }

  // Reads the tasks in order, each derived as it is reached.
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Task;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Task;
    const_iterator(const TaskList* list, std::size_t k) : list_(list), k_(k) {}
    Task operator*() const { return (*list_)[k_]; }
    const_iterator& operator++() {
      ++k_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++k_;
      return before;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.k_ == b.k_;
    }

   private:
    const TaskList* list_;
    std::size_t k_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  TaskKnobs knobs_;
  std::vector<std::int64_t> arrival_ns_;
  std::vector<double> context_tokens_;
  std::vector<double> generated_tokens_;
};

}  // namespace infersim
