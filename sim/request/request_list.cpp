#include "request/request_list.hpp"

#include "core/large_array.hpp"

#include <algorithm>

namespace infersim {

namespace {

bool whole_32(double v) {
  return v >= 0 && v <= 4294967295.0 && v == static_cast<double>(static_cast<std::uint32_t>(v));
}

}  // namespace

RequestList RequestList::from_records(RequestKnobs knobs, LargeVector<TraceRecord> records) {
  RequestList list(knobs);
  list.sizes_ = kWhole;
  list.whole_ = std::move(records);
  return list;
}

void RequestList::reserve(std::size_t n) {
  reserve_large(arrival_ns_, n);
  reserved_ = n;
}

void RequestList::add_sizes(SimTime arrival, double context_tokens, double generated_tokens) {
  if (sizes_ == kSame) {
    // The tasks so far all had the same sizes.
    if (whole_32(same_context_) && whole_32(same_generated_)) {
      sizes_ = kWhole;
      reserve_large(whole_, std::max(reserved_, arrival_ns_.size() + 1));
      for (const std::int64_t t : arrival_ns_)
        whole_.push_back({t, static_cast<std::uint32_t>(same_context_),
                          static_cast<std::uint32_t>(same_generated_)});
      arrival_ns_ = {};
    } else {
      sizes_ = kReal;
      reserve_large(real_, std::max(reserved_, arrival_ns_.size() + 1));
      real_.assign(arrival_ns_.size(), RealSizes{same_context_, same_generated_});
    }
  }
  if (sizes_ == kWhole) {
    if (whole_32(context_tokens) && whole_32(generated_tokens)) {
      whole_.push_back({arrival.count_ns(), static_cast<std::uint32_t>(context_tokens),
                        static_cast<std::uint32_t>(generated_tokens)});
      return;
    }
    sizes_ = kReal;
    reserve_large(arrival_ns_, std::max(reserved_, whole_.size() + 1));
    reserve_large(real_, std::max(reserved_, whole_.size() + 1));
    for (const TraceRecord& w : whole_) {
      arrival_ns_.push_back(w.offset_ns);
      real_.push_back(
          {static_cast<double>(w.context_tokens), static_cast<double>(w.generated_tokens)});
    }
    whole_ = {};
  }
  arrival_ns_.push_back(arrival.count_ns());
  real_.push_back({context_tokens, generated_tokens});
}

void RequestList::use_block_ids(const std::vector<std::uint32_t>& ids,
                                std::uint32_t tokens_per_id) {
  block_ids_ = &ids;
  block_id_tokens_ = tokens_per_id;
}

void RequestList::clear() {
  arrival_ns_ = {};
  whole_ = {};
  real_ = {};
  sizes_ = kSame;
  block_ranges_ = {};
}

}  // namespace infersim
