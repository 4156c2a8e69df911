// A field of a CSV file the program writes, quoted as RFC 4180 says when its
// text would otherwise read as more than one field or lose a byte: a comma,
// a double quote (written twice), a line break, or a space or tab at either
// end (which CSV readers trim, trace/csv_rows.hpp among them). Words the user
// gives (a class's name, a preset's, a sweep's value) go through it.
#pragma once

#include <string>
#include <string_view>

namespace infersim {

inline void append_csv_field(std::string& out, std::string_view text) {
  const bool quoted = text.find_first_of(",\"\r\n") != std::string_view::npos ||
                      (!text.empty() && (text.front() == ' ' || text.front() == '\t' ||
                                         text.back() == ' ' || text.back() == '\t'));
  if (!quoted) {
    out += text;
    return;
  }
  out += '"';
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

inline std::string csv_field(std::string_view text) {
  std::string out;
  append_csv_field(out, text);
  return out;
}

}  // namespace infersim
