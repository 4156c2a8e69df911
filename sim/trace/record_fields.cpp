#include "trace/record_fields.hpp"

#include <charconv>
#include <cmath>

#include "trace/timestamp.hpp"

namespace infersim {

std::string to_string(TimestampUnit unit) {
  switch (unit) {
    case TimestampUnit::kSeconds:
      return "s";
    case TimestampUnit::kMilliseconds:
      return "ms";
    case TimestampUnit::kMicroseconds:
      return "us";
    case TimestampUnit::kNanoseconds:
      return "ns";
    case TimestampUnit::kDatetime:
      return "datetime";
    case TimestampUnit::kAuto:
      break;
  }
  return "auto";
}

bool parse_timestamp_unit(const std::string& text, TimestampUnit& unit) {
  for (const TimestampUnit u :
       {TimestampUnit::kAuto, TimestampUnit::kSeconds, TimestampUnit::kMilliseconds,
        TimestampUnit::kMicroseconds, TimestampUnit::kNanoseconds, TimestampUnit::kDatetime}) {
    if (text == to_string(u)) {
      unit = u;
      return true;
    }
  }
  return false;
}

std::string parse_timestamp_field(std::string_view text, TimestampUnit unit, std::int64_t& ns) {
  if (text.empty()) return "empty, expected a timestamp";
  if (unit == TimestampUnit::kDatetime) {
    const TimestampParse parsed = parse_datetime_ns(text);
    ns = parsed.ns;
    return parsed.error;
  }
  const std::int64_t per_unit = unit == TimestampUnit::kSeconds        ? 1'000'000'000
                                : unit == TimestampUnit::kMilliseconds ? 1'000'000
                                : unit == TimestampUnit::kMicroseconds ? 1'000
                                                                       : 1;
  auto range = [&] {
    return "'" + printable(text) + " " + to_string(unit) +
           "' is outside the int64 nanosecond range";
  };
  std::int64_t whole = 0;
  const char* end = text.data() + text.size();
  auto r = std::from_chars(text.data(), end, whole);
  if (r.ec == std::errc() && r.ptr == end) {
    if (__builtin_mul_overflow(whole, per_unit, &ns)) return range();
    return {};
  }
  if (r.ec == std::errc::result_out_of_range) return range();
  double real = 0;
  r = std::from_chars(text.data(), end, real);
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(real)) {
    return "'" + printable(text, 40) + "' is not a number of " + to_string(unit);
  }
  const double scaled = real * static_cast<double>(per_unit);
  if (!(scaled < 9223372036854775808.0 && scaled >= -9223372036854775808.0)) return range();
  ns = std::llround(scaled);
  return {};
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string shown;
  for (const char c : text.substr(0, max_bytes)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      shown.append("\\x").append(1, kHex[byte >> 4]).append(1, kHex[byte & 15]);
    } else {
      shown += c;
    }
  }
  if (text.size() > max_bytes) shown += "...";
  return shown;
}

std::string parse_token_field(std::string_view field, std::uint32_t& out) {
  if (field.empty()) return "empty, expected a token count";
  std::uint64_t value = 0;
  for (const char c : field) {
    if (c < '0' || c > '9') {
      if (field.front() == '-') return "'" + printable(field) + "' is negative";
      if (c == '.' || c == 'e' || c == 'E') {
        return "'" + printable(field) + "' is not a whole number of tokens";
      }
      return "'" + printable(field, 32) + "' is not a number";
    }
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > 0xffffffffULL) return "'" + printable(field) + "' is too large (over 2^32 - 1)";
  }
  out = static_cast<std::uint32_t>(value);
  return {};
}

}  // namespace infersim
