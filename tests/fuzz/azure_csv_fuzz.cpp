// libFuzzer target: the Azure CSV reader, directly and through read_trace (auto, and as a generic
// CSV). Only InputError may come out.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  infersim::fuzz::run_one(infersim::fuzz::Target::kAzureCsv, data, size);
  return 0;
}
