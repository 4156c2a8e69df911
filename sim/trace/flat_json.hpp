// A scanner for one flat JSON object on one line, the shape of every JSONL
// trace: keys mapped to numbers, strings, booleans, null or arrays of numbers.
// It finds values without building a document; nested objects are skipped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infersim {

struct FlatJsonValue {
  enum Kind { kNumber, kString, kArray, kBool, kNull, kObject } kind = kNull;
  std::string_view text;  // the number's digits, the string's contents (unescaped if no
                          // escapes), or the array's inside
};

struct FlatJsonField {
  std::string_view key;
  FlatJsonValue value;
};

// Splits `line` into its fields. Returns an empty string on success, else what
// is wrong (with the column where it went wrong); when a key's value is what
// cannot be read (NaN, a bare word), `bad_key` is set to that key.
std::string scan_flat_json(std::string_view line, std::vector<FlatJsonField>& fields,
                           std::string_view* bad_key = nullptr);

// Parses the numbers of an array's inside ("1, 2, 3") as unsigned integers.
std::string parse_uint_array(std::string_view inside, std::vector<std::uint32_t>& out);

}  // namespace infersim
