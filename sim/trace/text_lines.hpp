// The lines of a text file held in memory (a MappedFile's bytes), read in
// place: LF or CRLF ends, a UTF-8 BOM skipped, the last line with or without
// its newline, numbered from 1. A line longer than 16 MiB is an input error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/input_error.hpp"

namespace infersim {

inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 24;

class TextLines {
 public:
  TextLines(std::string_view bytes, const std::string& path) : rest_(bytes), path_(path) {
    if (rest_.starts_with("\xEF\xBB\xBF")) rest_.remove_prefix(3);
  }
  // A part of a file whose first line is line `first_line`.
  TextLines(std::string_view part, const std::string& path, std::uint64_t first_line)
      : rest_(part), path_(path), number_(first_line - 1) {}
  bool next(std::string_view& line) {
    if (rest_.empty()) return false;
    ++number_;
    const std::size_t end = rest_.find('\n');
    line = rest_.substr(0, end);
    rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end + 1);
    if (line.size() + 1 > kMaxLineBytes) {
      throw InputError(path_, number_, "", "line too long for a CSV line (is this a CSV file?)");
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }
  std::uint64_t number() const { return number_; }
  // What is left to read.
  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
  const std::string& path_;
  std::uint64_t number_ = 0;
};

}  // namespace infersim
