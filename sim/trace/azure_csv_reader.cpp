#include "trace/azure_csv_reader.hpp"

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "core/input_error.hpp"
#include "core/large_array.hpp"
#include "core/mapped_file.hpp"
#include "trace/record_fields.hpp"
#include "trace/text_lines.hpp"
#include "trace/timestamp.hpp"

namespace infersim {

std::string parse_token_count(const char* text, std::uint32_t& out) {
  return parse_token_field(text == nullptr ? std::string_view() : std::string_view(text), out);
}

namespace {

constexpr std::size_t kColumns = 3;
constexpr std::string_view kNames[kColumns] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
std::string_view trim(std::string_view field) {
  while (!field.empty() && (field.front() == ' ' || field.front() == '\t'))
    field.remove_prefix(1);
  while (!field.empty() && (field.back() == ' ' || field.back() == '\t'))
    field.remove_suffix(1);
  return field;
}

// The next comma-separated field of `line`, taken off it; `more` says whether
// a comma followed.
std::string_view chop(std::string_view& line, bool& more) {
  const std::size_t comma = line.find(',');
  const std::string_view field = line.substr(0, comma);
  more = comma != std::string_view::npos;
  line.remove_prefix(more ? comma + 1 : line.size());
  return field;
}

}  // namespace

Trace read_azure_csv(const std::string& path) {
  Trace trace;
  trace.path = path;
  trace.format = "azure-csv";
  trace.timestamp_unit = "datetime";
  std::optional<MappedFile> file;
  try {
    file.emplace(path);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, "",
                     std::string("cannot open the trace file (") + e.what() +
                         "; the published traces are fetched by trace/fetch)");
  }
  const std::string_view bytes = file->bytes();
  TextLines lines(bytes, path);

  // The header: the three columns in any order, others ignored.
  std::string_view line;
  if (!lines.next(line)) {
    throw InputError(path, 1, "",
                     "empty file: expected a header TIMESTAMP,ContextTokens,GeneratedTokens");
  }
  std::vector<int> column_of_field;  // -1: ignored
  bool found[kColumns] = {false, false, false};
  for (bool more = true; more;) {
    const std::string_view name = trim(chop(line, more));
    int column = -1;
    for (std::size_t c = 0; c < kColumns; ++c) {
      if (name == kNames[c]) {
        if (found[c])
          throw InputError(path, 1, std::string(name), "column appears twice in the header");
        found[c] = true;
        column = static_cast<int>(c);
      }
    }
    column_of_field.push_back(column);
  }
  for (std::size_t c = 0; c < kColumns; ++c) {
    if (!found[c])
      throw InputError(path, 1, std::string(kNames[c]), "column missing from the header");
  }

  // Room for every record at once: a line holds at least
  // "YYYY-MM-DD HH:MM:SS,0,0\n" (24 bytes); touched only as far as it is filled.
  reserve_large(trace.records, bytes.size() / 24 + 1);
  std::string_view field[kColumns];
  while (lines.next(line)) {
    const std::uint64_t number = lines.number();
    bool more = true;
    for (const int column : column_of_field) {
      if (!more) throw InputError(path, number, "", "too few fields on the line");
      const std::string_view value = chop(line, more);
      if (column >= 0) field[column] = trim(value);
    }
    if (more) throw InputError(path, number, "", "too many fields on the line");
    TraceRecord record;
    const TimestampParse when = parse_datetime_ns(field[0]);
    if (!when.error.empty()) throw InputError(path, number, "TIMESTAMP", when.error);
    record.offset_ns = when.ns;
    std::string error = parse_token_field(field[1], record.context_tokens);
    if (!error.empty()) throw InputError(path, number, "ContextTokens", error);
    error = parse_token_field(field[2], record.generated_tokens);
    if (!error.empty()) throw InputError(path, number, "GeneratedTokens", error);
    trace.records.push_back(record);
  }
  if (trace.records.empty()) throw InputError(path, 2, "", "no requests after the header");
  normalize_trace(trace);
  return trace;
}

}  // namespace infersim
