#include "task/task_list.hpp"

#include "core/large_array.hpp"

#include <algorithm>

namespace infersim {

namespace {

bool whole_32(double v) {
  return v >= 0 && v <= 4294967295.0 && v == static_cast<double>(static_cast<std::uint32_t>(v));
}

}  // namespace

void TaskList::reserve(std::size_t n) {
  reserve_large(arrival_ns_, n);
  reserved_ = n;
}

void TaskList::add_sizes(double context_tokens, double generated_tokens) {
  const std::size_t k = arrival_ns_.size() - 1;  // the task being added
  if (sizes_ == kSame) {
    const bool whole = whole_32(same_context_) && whole_32(same_generated_);
    if (whole) {
      sizes_ = kWhole;
      reserve_large(whole_, std::max(reserved_, k + 1));
      whole_.assign(k, WholeSizes{static_cast<std::uint32_t>(same_context_),
                                  static_cast<std::uint32_t>(same_generated_)});
    } else {
      sizes_ = kReal;
      reserve_large(real_, std::max(reserved_, k + 1));
      real_.assign(k, RealSizes{same_context_, same_generated_});
    }
  }
  if (sizes_ == kWhole) {
    if (whole_32(context_tokens) && whole_32(generated_tokens)) {
      whole_.push_back({static_cast<std::uint32_t>(context_tokens),
                        static_cast<std::uint32_t>(generated_tokens)});
      return;
    }
    sizes_ = kReal;
    reserve_large(real_, std::max(reserved_, k + 1));
    for (const WholeSizes& w : whole_)
      real_.push_back({static_cast<double>(w.context), static_cast<double>(w.generated)});
    whole_ = {};
  }
  real_.push_back({context_tokens, generated_tokens});
}

void TaskList::pop_back() {
  arrival_ns_.pop_back();
  if (sizes_ == kWhole) whole_.pop_back();
  if (sizes_ == kReal) real_.pop_back();
}

void TaskList::clear() {
  arrival_ns_ = {};
  whole_ = {};
  real_ = {};
  sizes_ = kSame;
}

}  // namespace infersim
