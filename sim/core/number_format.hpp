// Number formatting shared by every writer: seconds with exactly nine decimals
// from the nanosecond clock, and doubles in their shortest round-trip form.
#pragma once

#include <cstdint>
#include <string>

namespace infersim {

// Appends ns as seconds with exactly nine decimals ("-0.000000001", "3.5" ->
// "3.500000000"). Integer arithmetic only.
void append_seconds9(std::string& out, std::int64_t ns);
// The same written at `at` (room for kSeconds9Max characters), returning the
// end: for writers that fill a large buffer row by row.
inline constexpr std::size_t kSeconds9Max = 30;
char* write_seconds9(char* at, std::int64_t ns);
std::string seconds9(std::int64_t ns);

// Shortest decimal that reads back as the same double ("4808", "0.1", "1e+21").
void append_shortest(std::string& out, double value);
std::string shortest(double value);

void append_integer(std::string& out, std::int64_t value);
// Shortest form and integer written at `at` (room for 32 and 24 characters).
char* write_shortest(char* at, double value);
char* write_integer(char* at, std::int64_t value);

// Fixed decimals, for the console.
std::string fixed(double value, int decimals);
// One value through a printf pattern ("%+.1f%%"), for tables laid out by hand.
std::string printf_text(const char* pattern, double value);

}  // namespace infersim
