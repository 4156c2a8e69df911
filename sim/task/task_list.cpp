#include "task/task_list.hpp"

#include "core/large_array.hpp"

namespace infersim {

void TaskList::reserve(std::size_t n) {
  reserve_large(arrival_ns_, n);
  reserve_large(context_tokens_, n);
  reserve_large(generated_tokens_, n);
}

void TaskList::clear() {
  arrival_ns_ = {};
  context_tokens_ = {};
  generated_tokens_ = {};
}

}  // namespace infersim
