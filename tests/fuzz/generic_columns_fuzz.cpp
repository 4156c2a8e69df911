// libFuzzer target: CSV and JSONL with named columns, any timestamp unit, with or without a filter.
// Only InputError may come out.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  infersim::fuzz::run_one(infersim::fuzz::Target::kGenericColumns, data, size);
  return 0;
}
