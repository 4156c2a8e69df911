// libFuzzer target: the Mooncake JSONL reader, as named and detected, and the token-id and aiperf
// JSONL readers on the same bytes. Only InputError may come out.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  infersim::fuzz::run_one(infersim::fuzz::Target::kMooncakeJsonl, data, size);
  return 0;
}
