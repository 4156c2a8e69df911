// libFuzzer target: settings: apply_settings_json on the parsed input, and apply_settings_file.
// Only InputError may come out.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  infersim::fuzz::run_one(infersim::fuzz::Target::kSettings, data, size);
  return 0;
}
