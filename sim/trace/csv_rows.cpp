#include "trace/csv_rows.hpp"

#include <cstring>

// Only the parser's splitting is used (TextLines gives the lines), so no
// reading thread. GCC 12 warns about the header's copy of a file name into
// its error type, which the rows never use.
#define CSV_IO_NO_THREAD
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#endif
#include <libfccp/csv.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

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

std::string CsvRows::field_name(std::size_t index) const {
  return index < names_.size() ? printable(names_[index]) : std::string();
}

bool CsvRows::next(std::vector<std::string_view>& fields) {
  fields.clear();
  std::string_view text;
  if (!lines_.next(text)) return false;
  // The parser reads a line as a C string: a NUL byte would end it early.
  if (text.find('\0') != std::string_view::npos) {
    throw InputError(path_, line(), "", "a NUL byte (is this a text file?)");
  }
  if (text.find_first_not_of(" \t") == std::string_view::npos) return true;
  line_.assign(text);
  char* rest = line_.data();  // the parser sets it to null after the last field
  for (std::size_t index = 0; rest != nullptr; ++index) {
    char* begin = nullptr;
    char* end = nullptr;
    const char* start = rest + std::strspn(rest, " \t");
    try {
      io::detail::chop_next_column<Quote>(rest, begin, end);
    } catch (const io::error::escaped_string_not_closed&) {
      // The parser takes any quote for an opening one.
      throw InputError(path_, line(), field_name(index),
                       *start == '"' ? kNotClosed : kInsideUnquoted);
    }
    Trim::trim(begin, end);
    if (const char* error = quoting_error(begin, end)) {
      throw InputError(path_, line(), field_name(index), error);
    }
    Quote::unescape(begin, end);
    fields.emplace_back(begin, static_cast<std::size_t>(end - begin));
  }
  return true;
}

}  // namespace infersim
