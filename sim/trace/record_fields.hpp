// Parsing the fields every trace format shares: a timestamp in a given unit,
// read exactly (integers multiply, reals round once: llround(t * ns per unit),
// MODEL.md section 2), and token counts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/trace_source.hpp"

namespace infersim {

// Returns an empty string on success, else what is wrong with the field.
std::string parse_timestamp_field(std::string_view text, TimestampUnit unit, std::int64_t& ns);

// A non-negative integer that fits in 32 bits; "500.0" and "-3" are refused.
std::string parse_token_field(std::string_view text, std::uint32_t& out);
// The common case of parse_token_field without building its message: true,
// with `out` set, for 1 to 9 digits; false for anything else, which
// parse_token_field then reads or refuses.
inline bool read_short_token_count(std::string_view text, std::uint32_t& out) {
  if (text.empty() || text.size() > 9) return false;
  std::uint32_t value = 0;
  for (const char c : text) {
    const auto d = static_cast<unsigned>(c - '0');
    if (d > 9) return false;
    value = value * 10 + d;
  }
  out = value;
  return true;
}

// A field as an error message shows it: at most `max_bytes` of it, with every
// control byte written as \xNN, so a binary file still gives one readable line.
std::string printable(std::string_view text, std::size_t max_bytes = 64);

}  // namespace infersim
