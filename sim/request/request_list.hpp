// The tasks of a run in issue order, kept compact: an arrival a task and its
// two token counts, the costs and the deadline derived by make_request with the
// list's knobs whenever a task is read. A week of traffic is millions of
// tasks, and each byte a task is a page to fill: the counts are kept once for
// a list where every task has the same (the synthetic mean sizes), with the
// arrival as two 32-bit integers a task where all are whole (recorded
// requests: a trace's records can become such a list in place), else as two
// reals a task; 8, 16 or 24 bytes a task in all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "core/large_array.hpp"
#include "request/request.hpp"
#include "trace/trace.hpp"

namespace infersim {

class RequestList {
 public:
  RequestList() = default;
  explicit RequestList(RequestKnobs knobs) : knobs_(knobs) {}

  // The tasks of `records` in their order, each record's offset_ns taken as
  // its task's arrival (in issue order): their memory becomes the list's.
  static RequestList from_records(RequestKnobs knobs, LargeVector<TraceRecord> records);

  // Reserves room for n tasks, on huge pages when the system gives them.
  void reserve(std::size_t n);
  void add(SimTime arrival, double context_tokens, double generated_tokens) {
    if (sizes_ == kSame && (arrival_ns_.empty() || (context_tokens == same_context_ &&
                                                    generated_tokens == same_generated_))) {
      arrival_ns_.push_back(arrival.count_ns());
      same_context_ = context_tokens;
      same_generated_ = generated_tokens;
      return;
    }
    add_sizes(arrival, context_tokens, generated_tokens);
  }
  void clear();

  // The prompts' block ids (BATCHING.md section 3): `ids` (which must outlive
  // the list) with `tokens_per_id` tokens an id; then one range into it a
  // request, given in order by add_block_range (or all at once).
  void use_block_ids(const std::vector<std::uint32_t>& ids, std::uint32_t tokens_per_id);
  void add_block_range(HashRange range) { block_ranges_.push_back(range); }
  void set_block_ranges(std::vector<HashRange> ranges) { block_ranges_ = std::move(ranges); }
  bool has_block_ids() const { return block_ids_ != nullptr; }
  // The tokens an id covers (Bh); 0 without ids.
  std::uint32_t block_id_tokens() const { return block_ids_ != nullptr ? block_id_tokens_ : 0; }

  std::size_t size() const { return sizes_ == kWhole ? whole_.size() : arrival_ns_.size(); }
  bool empty() const { return size() == 0; }
  // A closed loop's send instant of task k (model/simulation.hpp).
  void set_arrival(std::size_t k, SimTime at) {
    if (sizes_ == kWhole) {
      whole_[k].offset_ns = at.count_ns();
    } else {
      arrival_ns_[k] = at.count_ns();
    }
  }
  SimTime arrival(std::size_t k) const {
    return SimTime::ns(sizes_ == kWhole ? whole_[k].offset_ns : arrival_ns_[k]);
  }
  double context_tokens(std::size_t k) const {
    switch (sizes_) {
      case kSame:
        return same_context_;
      case kWhole:
        return whole_[k].context_tokens;
      case kReal:
        break;
    }
    return real_[k].context;
  }
  double generated_tokens(std::size_t k) const {
    switch (sizes_) {
      case kSame:
        return same_generated_;
      case kWhole:
        return whole_[k].generated_tokens;
      case kReal:
        break;
    }
    return real_[k].generated;
  }
  // Request k, derived (MODEL.md section 5), with its block ids.
  Request operator[](std::size_t k) const {
    Request request = make_request(arrival(k), context_tokens(k), generated_tokens(k), knobs_);
    if (block_ids_ != nullptr) {
      const HashRange r = block_ranges_[k];
      request.block_ids = {block_ids_->data() + r.begin, r.count};
      request.block_id_tokens = block_id_tokens_;
    }
    return request;
  }
  Request front() const { return (*this)[0]; }
  Request back() const { return (*this)[size() - 1]; }
  const RequestKnobs& knobs() const { return knobs_; }

  // Reads the tasks in order, each derived as it is reached.
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Request;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Request;
    const_iterator(const RequestList* list, std::size_t k) : list_(list), k_(k) {}
    Request operator*() const { return (*list_)[k_]; }
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
    const RequestList* list_;
    std::size_t k_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  // The first task whose sizes differ from the earlier ones' (kSame to
  // kWhole or kReal), or are not whole 32-bit counts (kWhole to kReal).
  void add_sizes(SimTime arrival, double context_tokens, double generated_tokens);

  struct RealSizes {
    double context, generated;
  };
  enum Sizes { kSame, kWhole, kReal };

  RequestKnobs knobs_;
  Sizes sizes_ = kSame;
  std::vector<std::int64_t> arrival_ns_;  // kSame, kReal
  double same_context_ = 0;               // every task's, while kSame
  double same_generated_ = 0;
  LargeVector<TraceRecord> whole_;  // kWhole: arrival (in offset_ns) and counts
  std::vector<RealSizes> real_;     // kReal
  std::size_t reserved_ = 0;        // what reserve() asked for, for the sizes to come
  const std::vector<std::uint32_t>* block_ids_ = nullptr;  // the trace's, when it has them
  std::uint32_t block_id_tokens_ = 0;
  std::vector<HashRange> block_ranges_;  // a request's ids in block_ids_
};

}  // namespace infersim
