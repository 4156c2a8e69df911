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

// parse_datetime_ns with the last date remembered: a trace's lines share
// their date, and reading and checking it is most of the work. The same
// nanoseconds and the same errors; `YYYY-MM-DD HH:MM:SS[.f…]` of a date seen
// on the line before takes the short way.
class DatetimeReader {
 public:
  TimestampParse read(std::string_view text) {
    TimestampParse out;
    if (!read_on_known_date(text, out.ns)) out = read_anew(text);
    return out;
  }

 private:
  bool read_on_known_date(std::string_view text, std::int64_t& ns) const;
  TimestampParse read_anew(std::string_view text);

  char date_[10] = {};
  bool known_ = false;
  std::int64_t date_ns_ = 0;  // the date's midnight, UTC
};

// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);

}  // namespace infersim
