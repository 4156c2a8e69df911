#include "trace/csv_rows.hpp"

#include <algorithm>
#include <cstring>

// The bytes are in memory already: no reading thread is needed. GCC 12 warns
// about the parser's copy of a file name into its error type, which the
// rows never use (they name the file themselves).
#define CSV_IO_NO_THREAD
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop

#include "core/input_error.hpp"
#include "trace/record_fields.hpp"

namespace infersim {
namespace {

using Quote = io::double_quote_escape<',', '"'>;
using Trim = io::trim_chars<' ', '\t'>;

constexpr const char* kNotClosed =
    "quote not closed on its line (a quoted field cannot hold a line break)";
constexpr const char* kInsideUnquoted =
    "a quote inside an unquoted field (quote the whole field, doubling its quotes)";

// What is wrong with a trimmed field's quoting, or nothing: a field either
// holds no quote, or is wholly quoted with every quote inside it doubled.
const char* quoting_error(const char* begin, const char* end) {
  if (begin == end || *begin != '"') {
    return std::memchr(begin, '"', static_cast<std::size_t>(end - begin)) == nullptr
               ? nullptr
               : kInsideUnquoted;
  }
  for (const char* c = begin + 1; c < end; ++c) {
    if (*c != '"') continue;
    if (c + 1 < end && c[1] == '"') {
      ++c;
      continue;
    }
    return c + 1 == end ? nullptr : "text after the closing quote";
  }
  return kNotClosed;  // not reached: the parser refuses it first
}

}  // namespace

CsvRows::CsvRows(std::string_view bytes, const std::string& path) : path_(path) {
  // A NUL byte would end the parser's line early, dropping the rest.
  const void* nul = std::memchr(bytes.data(), '\0', bytes.size());
  if (nul != nullptr) {
    const auto at = static_cast<std::size_t>(static_cast<const char*>(nul) - bytes.data());
    const auto line =
        static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.begin() + at, '\n'));
    throw InputError(path, line + 1, "", "a NUL byte (is this a text file?)");
  }
  lines_ = std::make_unique<io::LineReader>(path, bytes.data(), bytes.data() + bytes.size());
}

CsvRows::~CsvRows() = default;

std::uint64_t CsvRows::line() const {
  return lines_->get_file_line();
}

std::string CsvRows::field_name(std::size_t index) const {
  return index < names_.size() ? printable(names_[index]) : std::string();
}

bool CsvRows::next(std::vector<std::string_view>& fields) {
  fields.clear();
  char* line = nullptr;
  try {
    line = lines_->next_line();
  } catch (const io::error::line_length_limit_exceeded&) {
    throw InputError(path_, this->line(), "", "line too long for a CSV line (is this a CSV file?)");
  }
  if (line == nullptr) return false;
  if (line[std::strspn(line, " \t")] == '\0') return true;
  for (std::size_t index = 0; line != nullptr; ++index) {
    char* begin = nullptr;
    char* end = nullptr;
    const char* start = line + std::strspn(line, " \t");
    try {
      io::detail::chop_next_column<Quote>(line, begin, end);
    } catch (const io::error::escaped_string_not_closed&) {
      // The parser takes any quote for an opening one.
      throw InputError(path_, this->line(), field_name(index),
                       *start == '"' ? kNotClosed : kInsideUnquoted);
    }
    Trim::trim(begin, end);
    if (const char* error = quoting_error(begin, end)) {
      throw InputError(path_, this->line(), field_name(index), error);
    }
    Quote::unescape(begin, end);
    fields.emplace_back(begin, static_cast<std::size_t>(end - begin));
  }
  return true;
}

}  // namespace infersim
