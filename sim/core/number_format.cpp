#include "core/number_format.hpp"

#include <charconv>
#include <cstdio>

namespace infersim {

void append_integer(std::string& out, std::int64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

char* write_integer(char* at, std::int64_t value) {
  return std::to_chars(at, at + 24, value).ptr;
}

char* write_shortest(char* at, double value) {
  return std::to_chars(at, at + 32, value).ptr;
}

char* write_seconds9(char* at, std::int64_t ns) {
  std::uint64_t magnitude;
  if (ns < 0) {
    *at++ = '-';
    magnitude = 0 - static_cast<std::uint64_t>(ns);
  } else {
    magnitude = static_cast<std::uint64_t>(ns);
  }
  at = std::to_chars(at, at + 20, magnitude / 1'000'000'000).ptr;
  *at++ = '.';
  // Nine digits, two at a time from a table of 00..99, the last one alone.
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  std::uint64_t fraction = magnitude % 1'000'000'000;
  at[8] = static_cast<char>('0' + fraction % 10);
  fraction /= 10;
  for (int i = 6; i >= 0; i -= 2) {
    const std::size_t pair = 2 * (fraction % 100);
    at[i] = kPairs[pair];
    at[i + 1] = kPairs[pair + 1];
    fraction /= 100;
  }
  return at + 9;
}

void append_seconds9(std::string& out, std::int64_t ns) {
  char buffer[kSeconds9Max];
  out.append(buffer, write_seconds9(buffer, ns));
}

std::string seconds9(std::int64_t ns) {
  std::string out;
  append_seconds9(out, ns);
  return out;
}

void append_shortest(std::string& out, double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

std::string shortest(double value) {
  std::string out;
  append_shortest(out, value);
  return out;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

std::string printf_text(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

}  // namespace infersim
