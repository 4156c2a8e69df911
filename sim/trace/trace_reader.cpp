#include "trace/trace_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/input_error.hpp"
#include "core/mapped_file.hpp"
#include "trace/aiperf_reader.hpp"
#include "trace/azure_csv_reader.hpp"
#include "trace/csv_rows.hpp"
#include "trace/json_lines.hpp"
#include "trace/record_fields.hpp"
#include "trace/token_ids_reader.hpp"

namespace infersim {
namespace {

// Hash ids in a CSV field: "[1, 2, 3]", "1 2 3" or "1;2;3".
std::string parse_id_list(std::string_view text, std::vector<std::uint32_t>& out) {
  std::size_t pos = 0;
  auto separator = [](char c) {
    return c == '[' || c == ']' || c == ';' || c == ' ' || c == ',' || c == '\t';
  };
  for (;;) {
    while (pos < text.size() && separator(text[pos]))
      ++pos;
    if (pos == text.size()) return {};
    std::uint64_t value = 0;
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      value = value * 10 + static_cast<std::uint64_t>(text[pos] - '0');
      if (value > 0xffffffffULL) return "an id over 2^32 - 1";
      ++pos;
    }
    if (pos == start) return "expected a list of whole numbers";
    out.push_back(static_cast<std::uint32_t>(value));
  }
}

// The first line of the file (BOM and CR removed), for detection.
std::string first_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(
        path, 0, "",
        "cannot open the trace file (the published traces are fetched by trace/fetch)");
  std::string line;
  std::getline(in, line);
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// Stores a record and, for a trace with a column of block ids, its range:
// every record has one then (empty without ids).
void store(Trace& trace, const TraceSource& source, const TraceRecord& record,
           const std::vector<std::uint32_t>& ids) {
  if (!source.columns.hash_ids.empty()) {
    trace.hash_ranges.push_back({static_cast<std::uint32_t>(trace.hash_ids.size()),
                                 static_cast<std::uint32_t>(ids.size())});
    trace.hash_ids.insert(trace.hash_ids.end(), ids.begin(), ids.end());
  }
  trace.records.push_back(record);
}

// Keeps one CSV record's fields as they are read, then checks and stores them.
struct RecordBuilder {
  Trace& trace;
  const TraceSource& source;
  std::vector<std::uint32_t> ids;

  void add(std::uint64_t line, std::string_view timestamp, std::string_view input,
           std::string_view output, const std::string_view* hash_ids) {
    const std::string& path = source.path;
    TraceRecord record;
    std::string error = parse_timestamp_field(timestamp, source.unit, record.offset_ns);
    if (!error.empty()) throw InputError(path, line, source.columns.timestamp, error);
    error = parse_token_field(input, record.context_tokens);
    if (!error.empty()) throw InputError(path, line, source.columns.input, error);
    error = parse_token_field(output, record.generated_tokens);
    if (!error.empty()) throw InputError(path, line, source.columns.output, error);
    ids.clear();
    if (hash_ids != nullptr) {
      error = parse_id_list(*hash_ids, ids);
      if (!error.empty()) throw InputError(path, line, source.columns.hash_ids, error);
    }
    store(trace, source, record, ids);
  }
};

void finish(Trace& trace, const TraceSource& source, std::uint64_t last_line) {
  if (trace.records.empty()) {
    throw InputError(
        source.path, last_line + 1, "",
        trace.filtered_out > 0 ? "no requests match the filters" : "no requests in the file");
  }
  // Block ids named by a column are taken as Mooncake's: one id for 512
  // prompt tokens (BATCHING.md section 3).
  trace.block_id_tokens = trace.hash_ids.empty() ? 0 : kMooncakeBlockTokens;
  normalize_trace(trace);
}

std::unique_ptr<MappedFile> open_trace(const std::string& path) {
  try {
    return std::make_unique<MappedFile>(path);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, "",
                     std::string("cannot open the trace file (") + e.what() +
                         "; the published traces are fetched by trace/fetch)");
  }
}

TimestampUnit guess_unit(std::string_view first_value) {
  const bool datetime = first_value.find(':') != std::string_view::npos ||
                        first_value.find('-', 1) != std::string_view::npos;
  return datetime ? TimestampUnit::kDatetime : TimestampUnit::kSeconds;
}

}  // namespace

TraceSource resolve_source(const TraceSource& given) {
  TraceSource s = given;
  const bool mapped = !s.columns.timestamp.empty() || !s.columns.input.empty() ||
                      !s.columns.output.empty() || !s.columns.hash_ids.empty();
  if (s.format == "auto") {
    const std::string line = first_line(s.path);
    std::error_code size_error;
    if (std::filesystem::file_size(s.path, size_error) == 0 && !size_error) {
      throw InputError(s.path, 1, "", "empty file: expected a header line or a JSON object");
    }
    const bool json =
        s.path.ends_with(".jsonl") || s.path.ends_with(".json") ||
        (!s.path.ends_with(".csv") && line.find_first_not_of(" \t") != std::string::npos &&
         line[line.find_first_not_of(" \t")] == '{');
    if (json) {
      const bool mooncake = line.find("\"input_length\"") != std::string::npos &&
                            line.find("\"output_length\"") != std::string::npos;
      s.format = mooncake && !mapped ? "mooncake-jsonl" : "jsonl";
      if (!mapped && looks_like_aiperf_record(line)) s.format = "aiperf-jsonl";
      if (!mapped && looks_like_token_ids_record(line)) s.format = "token-ids-jsonl";
    } else {
      std::vector<std::string_view> header;
      CsvRows rows(line, s.path);
      rows.next(header);
      auto has = [&](std::string_view name) {
        return std::find(header.begin(), header.end(), name) != header.end();
      };
      // Two of a layout's three columns make it that layout, so that the
      // third, missing or misspelt, is named in the error.
      auto layout = [&](std::string_view a, std::string_view b, std::string_view c) {
        return !mapped && int{has(a)} + int{has(b)} + int{has(c)} >= 2;
      };
      if (layout("TIMESTAMP", "ContextTokens", "GeneratedTokens")) {
        s.format = "azure-csv";
      } else if (layout("Timestamp", "Request tokens", "Response tokens")) {
        s.format = "burstgpt-csv";
      } else {
        s.format = "csv";
      }
    }
  }
  auto fill = [&](const char* timestamp, const char* input, const char* output,
                  const char* hash_ids, TimestampUnit unit) {
    if (s.columns.timestamp.empty()) s.columns.timestamp = timestamp;
    if (s.columns.input.empty()) s.columns.input = input;
    if (s.columns.output.empty()) s.columns.output = output;
    if (s.columns.hash_ids.empty()) s.columns.hash_ids = hash_ids;
    if (s.unit == TimestampUnit::kAuto) s.unit = unit;
  };
  if (s.format == "azure-csv") {
    fill("TIMESTAMP", "ContextTokens", "GeneratedTokens", "", TimestampUnit::kDatetime);
  } else if (s.format == "mooncake-jsonl") {
    fill("timestamp", "input_length", "output_length", "hash_ids", TimestampUnit::kMilliseconds);
  } else if (s.format == "aiperf-jsonl" || s.format == "token-ids-jsonl") {
    if (s.unit == TimestampUnit::kAuto) s.unit = TimestampUnit::kNanoseconds;
  } else if (s.format == "burstgpt-csv") {
    fill("Timestamp", "Request tokens", "Response tokens", "", TimestampUnit::kSeconds);
  } else if (s.format == "csv" || s.format == "jsonl") {
    for (const auto& [name, flag] : {std::pair{&s.columns.timestamp, "--timestamp-column"},
                                     std::pair{&s.columns.input, "--input-column"},
                                     std::pair{&s.columns.output, "--output-column"}}) {
      if (name->empty()) {
        throw InputError(s.path, 1, "",
                         "not a known trace layout (Azure, Mooncake, BurstGPT): name its columns "
                         "with --timestamp-column, --input-column and --output-column (" +
                             std::string(flag) + " is missing)");
      }
    }
  } else {
    throw InputError(s.path, 0, "trace.format",
                     "unknown format '" + s.format +
                         "': expected auto, azure-csv, mooncake-jsonl, burstgpt-csv, aiperf-jsonl, "
                         "token-ids-jsonl, csv or jsonl");
  }
  return s;
}

Trace read_csv_trace(const TraceSource& source) {
  const auto file = open_trace(source.path);
  return read_csv_trace(source, file->bytes());
}

Trace read_csv_trace(const TraceSource& source, std::string_view bytes) {
  Trace trace;
  trace.path = source.path;
  trace.format = source.format;
  TraceSource s = source;
  const std::string& path = s.path;
  CsvRows rows(bytes, path);
  std::vector<std::string_view> fields;
  if (!rows.next(fields)) throw InputError(path, 1, "", "empty file: expected a header line");
  const std::vector<std::string> header(fields.begin(), fields.end());
  rows.name_columns(header);
  auto column = [&](const std::string& name, bool required) -> std::ptrdiff_t {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      if (required) throw InputError(path, 1, name, "column missing from the header");
      return -1;
    }
    if (std::find(it + 1, header.end(), name) != header.end()) {
      throw InputError(path, 1, name, "column appears twice in the header");
    }
    return it - header.begin();
  };
  const auto timestamp = column(s.columns.timestamp, true);
  const auto input = column(s.columns.input, true);
  const auto output = column(s.columns.output, true);
  const auto hash_ids = s.columns.hash_ids.empty() ? -1 : column(s.columns.hash_ids, true);
  std::vector<std::pair<std::ptrdiff_t, std::string>> filters;
  for (const auto& [name, value] : s.filters)
    filters.emplace_back(column(name, true), value);

  RecordBuilder builder{trace, s, {}};
  std::uint64_t line = 1;
  std::uint64_t blank_line = 0;
  while (rows.next(fields)) {
    line = rows.line();
    if (fields.empty()) {
      if (blank_line == 0) blank_line = line;
      continue;
    }
    if (blank_line != 0) throw InputError(path, blank_line, "", "empty line inside the trace");
    if (fields.size() < header.size())
      throw InputError(path, line, "", "too few fields on the line");
    if (fields.size() > header.size())
      throw InputError(path, line, "", "too many fields on the line");
    bool keep = true;
    for (const auto& [index, value] : filters)
      keep = keep && fields[static_cast<std::size_t>(index)] == value;
    if (!keep) {
      ++trace.filtered_out;
      continue;
    }
    if (s.unit == TimestampUnit::kAuto)
      s.unit = guess_unit(fields[static_cast<std::size_t>(timestamp)]);
    builder.add(line, fields[static_cast<std::size_t>(timestamp)],
                fields[static_cast<std::size_t>(input)], fields[static_cast<std::size_t>(output)],
                hash_ids >= 0 ? &fields[static_cast<std::size_t>(hash_ids)] : nullptr);
  }
  trace.timestamp_unit = to_string(s.unit);
  finish(trace, s, line);
  return trace;
}

Trace read_jsonl_trace(const TraceSource& source) {
  Trace trace;
  trace.path = source.path;
  trace.format = source.format;
  TraceSource s = source;
  const std::string& path = s.path;
  if (s.filters.size() > 0) {
    throw InputError(path, 0, "--filter", "filters apply to CSV columns; this trace is JSONL");
  }
  const auto file = open_trace(path);
  trace.records.reserve(file->bytes().size() / 64);
  jsonl::JsonLines lines(file->bytes(), path);
  jsonl::od::document document;
  std::vector<std::uint32_t> ids;
  const jsonl::RequestKeys keys{.timestamp = s.columns.timestamp,
                                .input_tokens = s.columns.input,
                                .output_tokens = s.columns.output,
                                .ids = s.columns.hash_ids,
                                .ids_what = "block ids",
                                .ids_required = false,
                                .dated = true};
  while (lines.next(document)) {
    const TraceRecord record = jsonl::read_request(lines, document, keys, s.unit, ids);
    store(trace, s, record, ids);
  }
  trace.timestamp_unit = to_string(s.unit);
  finish(trace, s, lines.line());
  return trace;
}

Trace read_trace(const TraceSource& given) {
  const TraceSource source = resolve_source(given);
  if (source.format == "azure-csv" && source.filters.empty() &&
      source.columns.timestamp == "TIMESTAMP" && source.unit == TimestampUnit::kDatetime) {
    return read_azure_csv(source.path, source.read_threads);
  }
  if (source.format == "aiperf-jsonl") return read_aiperf_trace(source);
  if (source.format == "token-ids-jsonl") return read_token_ids_trace(source);
  if (source.format == "mooncake-jsonl" || source.format == "jsonl")
    return read_jsonl_trace(source);
  return read_csv_trace(source);
}

}  // namespace infersim
