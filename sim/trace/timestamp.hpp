// Calendar timestamps read exactly: `YYYY-MM-DD HH:MM:SS[.f…]` (0 to 9
// fractional digits, a space or `T` between date and time, an optional `Z` or
// `±HH:MM` offset as in the Azure 2024 release) to integer nanoseconds since
// 1970-01-01 UTC, proleptic Gregorian, with no floating point.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace infersim {

struct TimestampParse {
  std::int64_t ns = 0;
  std::string error;  // empty on success: otherwise says what is wrong
};

TimestampParse parse_datetime_ns(std::string_view text);

// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);

}  // namespace infersim
