#include "trace/timestamp.hpp"

#include <cstring>

#include "trace/record_fields.hpp"

namespace infersim {
namespace {

// Reads exactly `count` digits at `pos`; false if any is not a digit.
bool read_digits(std::string_view text, std::size_t pos, std::size_t count, std::int64_t& out) {
  if (pos + count > text.size()) return false;
  out = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

bool is_leap(std::int64_t year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

unsigned days_in_month(std::int64_t year, std::int64_t month) {
  static constexpr unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

TimestampParse fail(std::string message) {
  return TimestampParse{0, std::move(message)};
}

}  // namespace

std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) {
  // Howard Hinnant's algorithm: eras of 400 years starting in March.
  year -= month <= 2;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const std::int64_t yoe = year - era * 400;
  const std::int64_t doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

TimestampParse parse_datetime_ns(std::string_view text) {
  // Built only on failure: this runs once a trace line.
  auto expected = [&] {
    return "expected YYYY-MM-DD HH:MM:SS[.fffffffff], got '" + printable(text) + "'";
  };
  std::int64_t year, month, day, hour, minute, second;
  if (text.size() < 19 || !read_digits(text, 0, 4, year) || text[4] != '-' ||
      !read_digits(text, 5, 2, month) || text[7] != '-' || !read_digits(text, 8, 2, day) ||
      (text[10] != ' ' && text[10] != 'T') || !read_digits(text, 11, 2, hour) || text[13] != ':' ||
      !read_digits(text, 14, 2, minute) || text[16] != ':' || !read_digits(text, 17, 2, second)) {
    return fail(expected());
  }
  if (month < 1 || month > 12) return fail("month " + std::to_string(month) + " does not exist");
  if (day < 1 || day > days_in_month(year, month)) {
    return fail("day " + std::to_string(day) + " does not exist in " +
                printable(text.substr(0, 7)));
  }
  if (hour > 23) return fail("hour " + std::to_string(hour) + " does not exist");
  if (minute > 59) return fail("minute " + std::to_string(minute) + " does not exist");
  if (second > 59) return fail("second " + std::to_string(second) + " does not exist");

  std::size_t pos = 19;
  std::int64_t fraction_ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (++digits > 9) return fail("more than 9 fractional digits (finer than a nanosecond)");
      fraction_ns = fraction_ns * 10 + (text[pos] - '0');
      ++pos;
    }
    if (digits == 0) return fail(expected());
    for (std::size_t i = digits; i < 9; ++i)
      fraction_ns *= 10;
  }
  std::int64_t offset_s = 0;
  if (pos < text.size()) {
    if (text[pos] == 'Z' && pos + 1 == text.size()) {
      pos += 1;
    } else if ((text[pos] == '+' || text[pos] == '-') && pos + 6 == text.size()) {
      std::int64_t off_h, off_m;
      if (!read_digits(text, pos + 1, 2, off_h) || text[pos + 3] != ':' ||
          !read_digits(text, pos + 4, 2, off_m) || off_h > 23 || off_m > 59) {
        return fail("unreadable UTC offset '" + printable(text.substr(pos)) + "'");
      }
      offset_s = (off_h * 3600 + off_m * 60) * (text[pos] == '+' ? 1 : -1);
      pos += 6;
    } else {
      return fail(expected());
    }
  }
  const std::int64_t days =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  // In 128 bits, so that the first representable nanosecond of 1677 (whose whole
  // seconds alone fall below the range) is still read.
  __extension__ typedef __int128 Int128;
  const Int128 total = static_cast<Int128>(seconds) * 1'000'000'000 + fraction_ns;
  const std::int64_t ns = static_cast<std::int64_t>(total);
  if (total != ns) {
    return fail("'" + printable(text) + "' is outside the int64 nanosecond range (1677 to 2262)");
  }
  return TimestampParse{ns, {}};
}

bool DatetimeReader::read_on_known_date(std::string_view text, std::int64_t& ns) const {
  if (!known_ || text.size() < 19 || text[10] != ' ' || std::memcmp(text.data(), date_, 10) != 0) {
    return false;
  }
  auto digit = [&](std::size_t i) { return static_cast<unsigned>(text[i] - '0'); };
  for (const std::size_t i : {11u, 12u, 14u, 15u, 17u, 18u}) {
    if (digit(i) > 9) return false;
  }
  if (text[13] != ':' || text[16] != ':') return false;
  const std::int64_t hour = digit(11) * 10 + digit(12);
  const std::int64_t minute = digit(14) * 10 + digit(15);
  const std::int64_t second = digit(17) * 10 + digit(18);
  if (hour > 23 || minute > 59 || second > 59) return false;
  std::int64_t fraction_ns = 0;
  if (text.size() > 19) {
    const std::size_t digits = text.size() - 20;
    if (text[19] != '.' || digits == 0 || digits > 9) return false;
    for (std::size_t i = 20; i < text.size(); ++i) {
      if (digit(i) > 9) return false;
      fraction_ns = fraction_ns * 10 + digit(i);
    }
    for (std::size_t i = digits; i < 9; ++i)
      fraction_ns *= 10;
  }
  ns = date_ns_ + ((hour * 60 + minute) * 60 + second) * 1'000'000'000 + fraction_ns;
  return true;
}

TimestampParse DatetimeReader::read_anew(std::string_view text) {
  TimestampParse out = parse_datetime_ns(text);
  if (!out.error.empty()) return out;
  // Read, so the date's digits are valid; remembered where a whole day of
  // nanoseconds stays far inside the int64 range.
  std::int64_t year = 0, month = 0, day = 0;
  known_ = read_digits(text, 0, 4, year) && read_digits(text, 5, 2, month) &&
           read_digits(text, 8, 2, day) && year >= 1700 && year <= 2200;
  if (known_) {
    std::memcpy(date_, text.data(), 10);
    date_ns_ = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) *
               86400 * 1'000'000'000;
  }
  return out;
}

}  // namespace infersim
