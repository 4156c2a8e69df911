#include "trace/azure_csv_reader.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
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
// Files this large are read on two threads.
constexpr std::size_t kParallelBytes = std::size_t{8} << 20;
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

// The rows of `lines` appended to `out`: fields in the header's order
// (`column_of_field`, -1 for a column ignored). `bytes` sizes the reservation.
void read_rows(TextLines& lines, const std::vector<int>& column_of_field, const std::string& path,
               std::vector<TraceRecord>& out, std::size_t bytes) {
  // Room for every record at once: a line holds at least
  // "YYYY-MM-DD HH:MM:SS,0,0\n" (24 bytes); touched only as far as it is filled.
  reserve_large(out, bytes / 24 + 1);
  std::string_view line;
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
    out.push_back(record);
  }
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

  // A large file is read in two halves at once, split at a line end; the
  // second half's lines are counted first, so that an error names its line,
  // and the first half's error (the earlier line) wins.
  const std::string_view body = lines.rest();
  std::size_t split = body.size();
  if (body.size() >= kParallelBytes && std::thread::hardware_concurrency() > 1) {
    split = body.find('\n', body.size() / 2);
    split = split == std::string_view::npos ? body.size() : split + 1;
  }
  const std::string_view first = body.substr(0, split);
  const std::string_view second = body.substr(split);
  std::vector<TraceRecord> later;
  std::future<void> reading;
  if (!second.empty()) {
    reading = std::async(std::launch::async, [&] {
      const auto before = static_cast<std::uint64_t>(std::count(first.begin(), first.end(), '\n'));
      TextLines part(second, path, lines.number() + before + 1);
      read_rows(part, column_of_field, path, later, second.size());
    });
  }
  try {
    TextLines part(first, path, lines.number() + 1);
    read_rows(part, column_of_field, path, trace.records, bytes.size());
  } catch (...) {
    if (reading.valid()) reading.wait();
    throw;
  }
  if (reading.valid()) {
    reading.get();
    trace.records.insert(trace.records.end(), later.begin(), later.end());
  }
  if (trace.records.empty()) throw InputError(path, 2, "", "no requests after the header");
  normalize_trace(trace);
  return trace;
}

}  // namespace infersim
