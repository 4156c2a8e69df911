#include "trace/azure_csv_reader.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "core/cores.hpp"
#include "core/input_error.hpp"
#include "core/large_array.hpp"
#include "core/mapped_file.hpp"
#include "trace/record_fields.hpp"
#include "trace/text_lines.hpp"
#include "trace/timestamp.hpp"
#include "trace/trace_reader.hpp"

namespace infersim {

std::string parse_token_count(const char* text, std::uint32_t& out) {
  return parse_token_field(text == nullptr ? std::string_view() : std::string_view(text), out);
}

namespace {

constexpr std::size_t kColumns = 3;
// Files this large are read on two threads.
constexpr std::size_t kParallelBytes = std::size_t{1} << 20;
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

// Thrown by the in-place reading on a quote in the header or in a column it
// does not read: such a file is read again as RFC 4180 has it.
struct QuoteSeen {};

// Records in `text` at most: a valid line is at least 24 bytes with its
// newline ("YYYY-MM-DD HH:MM:SS,0,0\n"), the last one 23 without.
std::size_t most_records(std::string_view text) {
  return text.size() / 24 + 1;
}

// The rows of `lines` written to out[0, 1, ...]: fields in the header's order
// (`column_of_field`, -1 for a column ignored). Returns how many; `out` has
// room for most_records of the lines' text.
std::size_t read_rows(TextLines& lines, const std::vector<int>& column_of_field,
                      const std::string& path, TraceRecord* out, std::size_t room) {
  std::string_view line;
  std::string_view field[kColumns];
  std::size_t count = 0;
  DatetimeReader timestamps;
  while (lines.next(line)) {
    const std::uint64_t number = lines.number();
    // Trailing blank lines were cut off the text: this one is inside.
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      throw InputError(path, number, "", "empty line inside the trace");
    }
    bool more = true;
    for (const int column : column_of_field) {
      if (!more) throw InputError(path, number, "", "too few fields on the line");
      const std::string_view value = chop(line, more);
      if (column >= 0) {
        field[column] = trim(value);
      } else if (value.find('"') != std::string_view::npos) {
        throw QuoteSeen{};
      }
    }
    if (more) throw InputError(path, number, "", "too many fields on the line");
    TraceRecord record;
    const TimestampParse when = timestamps.read(field[0]);
    if (!when.error.empty()) throw InputError(path, number, "TIMESTAMP", when.error);
    record.offset_ns = when.ns;
    for (const std::size_t c : {std::size_t{1}, std::size_t{2}}) {
      std::uint32_t& count = c == 1 ? record.context_tokens : record.generated_tokens;
      if (read_short_token_count(field[c], count)) continue;
      const std::string error = parse_token_field(field[c], count);
      if (!error.empty()) throw InputError(path, number, std::string(kNames[c]), error);
    }
    if (count == room) throw std::logic_error("read_azure_csv: more records than lines allow");
    out[count++] = record;
  }
  return count;
}

// Reads the file in place, for Azure's unquoted shape; throws QuoteSeen, or
// InputError for what it cannot read.
Trace read_in_place(const std::string& path, std::string_view bytes, unsigned threads) {
  Trace trace;
  trace.path = path;
  trace.format = "azure-csv";
  trace.timestamp_unit = "datetime";
  TextLines lines(bytes, path);

  // The header: the three columns in any order, others ignored.
  std::string_view line;
  if (!lines.next(line)) {
    throw InputError(path, 1, "",
                     "empty file: expected a header TIMESTAMP,ContextTokens,GeneratedTokens");
  }
  if (line.find('"') != std::string_view::npos) throw QuoteSeen{};
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

  // A large file is read in two halves at once, split at a line end, into one
  // array: a line is a record (or an error), so the second half's records
  // start at the first half's line count. That count also numbers the second
  // half's lines, so that an error names its line; the first half's error
  // (the earlier line) wins. The array is sized, not filled, beforehand (a
  // record a shortest line): each thread faults in the pages it writes.
  // Blank lines at the end of the file end it; one before a record is an
  // error (read_rows).
  std::string_view body = lines.rest();
  body = body.substr(0, body.find_last_not_of(" \t\r\n") + 1);
  std::size_t split = body.size();
  if (threads == 0) threads = usable_cores() > 1 ? 2 : 1;
  if (body.size() >= kParallelBytes && threads > 1) {
    split = body.find('\n', body.size() / 2);
    split = split == std::string_view::npos ? body.size() : split + 1;
  }
  const std::string_view first = body.substr(0, split);
  const std::string_view second = body.substr(split);
  const std::size_t first_room = most_records(first);
  trace.records.resize(first_room + (second.empty() ? 0 : most_records(second)));
  prefer_huge_pages(trace.records.data(), trace.records.size() * sizeof(TraceRecord));
  std::size_t earlier = 0, later = 0, first_lines = 0;
  std::future<void> reading;
  if (!second.empty()) {
    trace.read_threads = 2;
    reading = std::async(std::launch::async, [&] {
      first_lines = static_cast<std::size_t>(std::count(first.begin(), first.end(), '\n'));
      // More lines than valid ones fit: the first half holds an error, which
      // its own reading reports.
      if (first_lines > first_room) return;
      TextLines part(second, path, lines.number() + first_lines + 1);
      later = read_rows(part, column_of_field, path, trace.records.data() + first_lines,
                        trace.records.size() - first_lines);
    });
  }
  try {
    TextLines part(first, path, lines.number() + 1);
    earlier = read_rows(part, column_of_field, path, trace.records.data(), first_room);
  } catch (...) {
    if (reading.valid()) reading.wait();
    throw;
  }
  if (reading.valid()) {
    reading.get();
    // Every line of the first half was a record.
    if (earlier != first_lines) throw std::logic_error("read_azure_csv: a line without a record");
  }
  trace.records.resize(earlier + later);
  if (trace.records.empty()) throw InputError(path, 2, "", "no requests after the header");
  normalize_trace(trace);
  return trace;
}

// The file as RFC 4180 reads it (csv_rows.hpp): for a file with quotes.
Trace read_quoted(const std::string& path, std::string_view bytes) {
  TraceSource source;
  source.path = path;
  source.format = "azure-csv";
  source.columns = {std::string(kNames[0]), std::string(kNames[1]), std::string(kNames[2]), ""};
  source.unit = TimestampUnit::kDatetime;
  return read_csv_trace(source, bytes);
}

}  // namespace

Trace read_azure_csv(const std::string& path, unsigned threads) {
  std::optional<MappedFile> file;
  try {
    file.emplace(path);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, "",
                     std::string("cannot open the trace file (") + e.what() +
                         "; the published traces are fetched by trace/fetch)");
  }
  const std::string_view bytes = file->bytes();
  // The published files have no quote: they are read in place, and a file
  // that has quotes is read by the RFC 4180 reader. The in-place reading
  // refuses every line with a quote in a column it reads (no timestamp or
  // count holds one) and stops at one in a column it ignores, so what it
  // reads is what the RFC 4180 reader would; on an error it gives way to
  // that reader, whose answer stands, when the file has a quote.
  try {
    return read_in_place(path, bytes, threads);
  } catch (const QuoteSeen&) {
    return read_quoted(path, bytes);
  } catch (const InputError&) {
    if (bytes.find('"') != std::string_view::npos) return read_quoted(path, bytes);
    throw;
  }
}

}  // namespace infersim
