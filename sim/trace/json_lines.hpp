// JSON lines read with simdjson's On-Demand API, for every JSONL reader
// (Mooncake, generic, aiperf, token ids): each non-blank line is one document,
// parsed in place in the file's bytes. On-Demand reads only what it is asked
// for, so the readers walk every field: a value they do not use is still
// checked as JSON, and a key may appear once in an object. Errors are
// `FILE:LINE: FIELD: what` with the field's key (nested keys joined by dots).
// For the readers' sources only: the library links simdjson privately.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "trace/trace.hpp"
#include "trace/trace_source.hpp"

namespace infersim::jsonl {

namespace od = simdjson::ondemand;

class JsonLines {
 public:
  // `bytes` (a whole file) must outlive the lines.
  JsonLines(std::string_view bytes, const std::string& path);
  // Parses the next non-blank line into `document`; false after the last
  // one. Blank lines at the end of the file are fine; one before another
  // line is an error naming it.
  bool next(od::document& document);
  std::uint64_t line() const { return line_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(std::string_view field, const std::string& what) const;
  [[noreturn]] void fail(std::string_view field, simdjson::error_code error) const;

 private:
  od::parser parser_;
  std::string_view rest_;
  const char* end_ = nullptr;  // of the bytes: what lies before it can pad a line
  std::string path_;
  std::uint64_t line_ = 0;
  std::string padded_;  // a line too near the end of the bytes to be padded by them
};

// The line's object, or an error.
od::object root_object(const JsonLines& lines, od::document& document);
// After the root object's fields: anything more on the line is an error.
void expect_end(const JsonLines& lines, od::document& document);

// An object's keys, so far, to refuse one seen twice.
class SeenKeys {
 public:
  // The next field's key (unescaped); throws on a duplicate, named `prefix` + key.
  std::string_view take(const JsonLines& lines, od::field& field, std::string_view prefix);

 private:
  std::vector<std::string_view> keys_;
};

// Walks a value the reader does not use, so that invalid JSON in it is an
// error named `field`.
void check_value(const JsonLines& lines, const std::string& field, od::value value);

// A number's text, for the exact parsers of record_fields (the same digits
// whatever the parser), once checked against JSON's number grammar; an error
// naming `field` for anything else. `allow_string`: a string's contents
// are returned instead (a timestamp may be a date).
std::string_view number_text(const JsonLines& lines, std::string_view field, od::value value,
                             bool allow_string, bool* was_string = nullptr);

// A token count, read as parse_token_field reads one (with its messages).
std::uint32_t token_count(const JsonLines& lines, std::string_view field, od::value value);

// A non-negative integer up to `max`; an error naming `field` otherwise
// (`what` says what was expected).
std::uint64_t whole_number(const JsonLines& lines, std::string_view field, od::value value,
                           std::uint64_t max, const char* what);

// Appends a list of ids from 0 to 2^32 - 1 (a prompt's block ids or token
// ids) to `ids`; an error naming `field` saying "expected a list of `what`"
// for anything else.
void append_ids(const JsonLines& lines, std::string_view field, od::value value, const char* what,
                std::vector<std::uint32_t>& ids);

// Where a JSONL trace keeps a request's fields.
struct RequestKeys {
  std::string_view timestamp;
  std::string_view input_tokens;
  std::string_view output_tokens;
  std::string_view ids;  // the prompt's ids; empty: the trace has none
  const char* ids_what;  // what the ids are, as append_ids names them
  bool ids_required;     // else a line may leave its ids out
  bool dated;            // a timestamp may be a string (a date)
};

// The request on the line: its object's keyed fields, every other field
// checked as JSON, nothing after the object, no key twice and none of the
// keyed fields missing. `ids` is cleared, then given the prompt's ids. A
// timestamp in `unit` kAuto settles it: a string is a date, a number seconds.
TraceRecord read_request(const JsonLines& lines, od::document& document, const RequestKeys& keys,
                         TimestampUnit& unit, std::vector<std::uint32_t>& ids);

}  // namespace infersim::jsonl
