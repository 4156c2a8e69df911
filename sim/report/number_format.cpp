#include "report/number_format.hpp"

#include <charconv>
#include <cstdio>

namespace infersim {

void append_integer(std::string& out, std::int64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

void append_seconds9(std::string& out, std::int64_t ns) {
  std::uint64_t magnitude;
  if (ns < 0) {
    out += '-';
    magnitude = 0 - static_cast<std::uint64_t>(ns);
  } else {
    magnitude = static_cast<std::uint64_t>(ns);
  }
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), magnitude / 1'000'000'000);
  out.append(buffer, result.ptr);
  out += '.';
  std::uint64_t fraction = magnitude % 1'000'000'000;
  char digits[9];
  for (int i = 8; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  out.append(digits, 9);
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

}  // namespace infersim
