// The rows of a CSV file as RFC 4180 reads them: the lines of TextLines (LF
// or CRLF, a UTF-8 BOM skipped), each split at commas by fast-cpp-csv-parser
// (libfccp) with its double_quote_escape policy, so that a field in double
// quotes may hold commas and "" for a quote; spaces and tabs around a field
// are trimmed. Stricter than the parser alone, so that no byte is dropped
// silently: text after a closing quote, a quote inside an unquoted field, an
// unclosed quote and a NUL byte are errors naming the line (and the column,
// once named). The parser splits a line at a time, so a quoted field cannot
// hold a line break: its line is refused as an unclosed quote.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/text_lines.hpp"

namespace infersim {

class CsvRows {
 public:
  // `bytes` (a whole file, e.g. a MappedFile's) must outlive the rows.
  CsvRows(std::string_view bytes, const std::string& path) : path_(path), lines_(bytes, path_) {}
  CsvRows(const CsvRows&) = delete;
  CsvRows& operator=(const CsvRows&) = delete;

  // The next line's fields, unquoted; false after the last line. A blank line
  // (nothing but spaces and tabs) gives no fields. The views hold until the
  // next call. Throws InputError on a line it cannot split.
  bool next(std::vector<std::string_view>& fields);
  // The line the last call read, from 1.
  std::uint64_t line() const { return lines_.number(); }
  // The names errors give the fields, by position (the header's).
  void name_columns(std::vector<std::string> names) { names_ = std::move(names); }

 private:
  std::string field_name(std::size_t index) const;
  std::string path_;
  TextLines lines_;
  std::string line_;  // the line being split: the parser writes into it
  std::vector<std::string> names_;
};

}  // namespace infersim
