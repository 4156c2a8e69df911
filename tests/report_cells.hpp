// Reading back what the reports print, for tests that check a printed figure
// against one worked out independently: a duration cell ("13.582 s",
// "473.0 ms", "25.0 min", "3.92 h") as seconds with the half-unit of its last
// digit, a plain number with the same, and the mean of a requests.csv column.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>

#include "test_support.hpp"

namespace infersim::test {

// A printed number and how far from the exact figure it may lie: half a unit
// of its last digit.
struct PrintedValue {
  double value = 0;
  double tolerance = 0;
};

// "12.345" -> 12.345 ± 0.0005.
inline std::optional<PrintedValue> printed_number(const std::string& text) {
  static const std::regex number(R"(^\s*(-?[0-9]+)(?:\.([0-9]+))?)");
  std::smatch m;
  if (!std::regex_search(text, m, number)) return std::nullopt;
  const std::size_t decimals = m[2].matched ? m[2].length() : 0;
  return PrintedValue{std::stod(m[0].str()), 0.5 * std::pow(10.0, -static_cast<double>(decimals))};
}

// A duration cell in seconds: its number times its unit's seconds.
inline std::optional<PrintedValue> printed_seconds(const std::string& cell) {
  static const std::regex duration(R"(^\s*(-?[0-9.]+) (ms|s|min|h)\s*$)");
  std::smatch m;
  if (!std::regex_match(cell, m, duration)) return std::nullopt;
  const std::string unit = m[2];
  const double scale = unit == "ms" ? 1e-3 : unit == "s" ? 1 : unit == "min" ? 60 : 3600;
  auto v = printed_number(m[1]);
  if (!v) return std::nullopt;
  return PrintedValue{v->value * scale, v->tolerance * scale};
}

// The mean of a requests.csv column of nine-decimal seconds, summed exactly
// in nanoseconds.
inline double column_mean_s(const std::filesystem::path& requests_csv, const std::string& column) {
  const auto rows = read_csv(requests_csv);
  long double sum_ns = 0;
  for (const auto& row : rows)
    sum_ns += static_cast<long double>(ns_of(row.at(column)));
  EXPECT_FALSE(rows.empty()) << requests_csv;
  return rows.empty() ? 0 : static_cast<double>(sum_ns / rows.size() / 1e9L);
}

}  // namespace infersim::test
