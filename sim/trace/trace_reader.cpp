#include "trace/trace_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/input_error.hpp"
#include "core/mapped_file.hpp"
#include "trace/aiperf_reader.hpp"
#include "trace/azure_csv_reader.hpp"
#include "trace/flat_json.hpp"
#include "trace/record_fields.hpp"
#include "trace/text_lines.hpp"

namespace infersim {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Splits one CSV line at commas; a field in double quotes may hold commas and
// "" for a quote. Unquoted fields are trimmed of spaces and tabs.
void split_csv(std::string_view line, std::vector<std::string_view>& fields, std::string& scratch) {
  fields.clear();
  scratch.clear();
  scratch.reserve(line.size());  // quoted fields are unescaped here; no reallocation
  std::size_t pos = 0;
  for (;;) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t'))
      ++pos;
    if (pos < line.size() && line[pos] == '"') {
      const std::size_t start = scratch.size();
      ++pos;
      while (pos < line.size()) {
        if (line[pos] == '"') {
          if (pos + 1 < line.size() && line[pos + 1] == '"') {
            scratch += '"';
            pos += 2;
            continue;
          }
          ++pos;
          break;
        }
        scratch += line[pos++];
      }
      fields.emplace_back(scratch.data() + start, scratch.size() - start);
      while (pos < line.size() && line[pos] != ',')
        ++pos;
    } else {
      const std::size_t start = pos;
      while (pos < line.size() && line[pos] != ',')
        ++pos;
      std::size_t end = pos;
      while (end > start && (line[end - 1] == ' ' || line[end - 1] == '\t'))
        --end;
      fields.push_back(line.substr(start, end - start));
    }
    if (pos >= line.size()) return;
    ++pos;  // the comma
  }
}

// Hash ids in a CSV field: "[1, 2, 3]", "1 2 3" or "1;2;3".
std::string parse_id_list(std::string_view text, std::vector<std::uint32_t>& out) {
  std::string normalized(text);
  for (char& c : normalized) {
    if (c == '[' || c == ']' || c == ';' || c == ' ') c = ',';
  }
  std::string compact;
  for (std::size_t i = 0; i < normalized.size(); ++i) {
    if (normalized[i] == ',' && (compact.empty() || compact.back() == ',')) continue;
    compact += normalized[i];
  }
  if (!compact.empty() && compact.back() == ',') compact.pop_back();
  return parse_uint_array(compact, out);
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(
        path, 0, "",
        "cannot open the trace file (the published traces are fetched by trace/fetch)");
  std::string content;
  in.seekg(0, std::ios::end);
  content.resize(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  return content;
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

// Keeps one record's fields as they are read, then checks and stores them.
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
    // With a column of block ids, every record has a range (empty without them).
    if (!source.columns.hash_ids.empty()) {
      ids.clear();
      if (hash_ids != nullptr) {
        error = parse_id_list(*hash_ids, ids);
        if (!error.empty()) throw InputError(path, line, source.columns.hash_ids, error);
      }
      trace.hash_ranges.push_back({static_cast<std::uint32_t>(trace.hash_ids.size()),
                                   static_cast<std::uint32_t>(ids.size())});
      trace.hash_ids.insert(trace.hash_ids.end(), ids.begin(), ids.end());
    }
    trace.records.push_back(record);
  }
};

void finish(Trace& trace, const TraceSource& source, std::uint64_t last_line) {
  if (trace.records.empty()) {
    throw InputError(
        source.path, last_line + 1, "",
        trace.filtered_out > 0 ? "no requests match the filters" : "no requests in the file");
  }
  normalize_trace(trace);
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
        ends_with(s.path, ".jsonl") || ends_with(s.path, ".json") ||
        (!ends_with(s.path, ".csv") && line.find_first_not_of(" \t") != std::string::npos &&
         line[line.find_first_not_of(" \t")] == '{');
    if (json) {
      const bool mooncake = line.find("\"input_length\"") != std::string::npos &&
                            line.find("\"output_length\"") != std::string::npos;
      s.format = mooncake && !mapped ? "mooncake-jsonl" : "jsonl";
      if (!mapped && looks_like_aiperf_record(line)) s.format = "aiperf-jsonl";
    } else {
      std::vector<std::string_view> header;
      std::string scratch;
      split_csv(line, header, scratch);
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
  } else if (s.format == "aiperf-jsonl") {
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
                         "csv or jsonl");
  }
  return s;
}

Trace read_csv_trace(const TraceSource& source) {
  Trace trace;
  trace.path = source.path;
  trace.format = source.format;
  TraceSource s = source;
  const std::string& path = s.path;
  std::optional<MappedFile> file;
  try {
    file.emplace(path);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, "",
                     std::string("cannot open the trace file (") + e.what() +
                         "; the published traces are fetched by trace/fetch)");
  }
  TextLines lines(file->bytes(), path);
  std::vector<std::string_view> fields;
  std::string scratch;
  std::string_view header_line;
  if (!lines.next(header_line)) throw InputError(path, 1, "", "empty file: expected a header line");
  split_csv(header_line, fields, scratch);
  const std::vector<std::string> header(fields.begin(), fields.end());
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
  std::string_view view;
  {
    while (lines.next(view)) {
      line = lines.number();
      if (view.find_first_not_of(" \t") == std::string_view::npos) {
        if (blank_line == 0) blank_line = line;
        continue;
      }
      if (blank_line != 0) throw InputError(path, blank_line, "", "empty line inside the trace");
      split_csv(view, fields, scratch);
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
  const std::string content = read_whole_file(path);
  std::string_view rest(content);
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);
  trace.records.reserve(content.size() / 64);
  RecordBuilder builder{trace, s, {}};
  std::vector<FlatJsonField> fields;
  std::uint64_t line = 0;
  std::uint64_t blank_line = 0;
  if (s.filters.size() > 0) {
    throw InputError(path, 0, "--filter", "filters apply to CSV columns; this trace is JSONL");
  }
  while (!rest.empty()) {
    ++line;
    const std::size_t newline = rest.find('\n');
    std::string_view text = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) {
      if (blank_line == 0) blank_line = line;
      continue;
    }
    if (blank_line != 0) throw InputError(path, blank_line, "", "empty line inside the trace");
    std::string_view bad_key;
    const std::string error = scan_flat_json(text, fields, &bad_key);
    if (!error.empty() && !bad_key.empty()) {
      throw InputError(path, line, printable(bad_key), error);
    }
    if (!error.empty()) throw InputError(path, line, "", "not a JSON object: " + error);
    const FlatJsonValue* found[4] = {nullptr, nullptr, nullptr, nullptr};
    const std::string* names[4] = {&s.columns.timestamp, &s.columns.input, &s.columns.output,
                                   &s.columns.hash_ids};
    for (const FlatJsonField& f : fields) {
      for (int i = 0; i < 4; ++i) {
        if (found[i] == nullptr && f.key == *names[i]) found[i] = &f.value;
      }
    }
    for (int i = 0; i < 3; ++i) {
      if (found[i] == nullptr) throw InputError(path, line, *names[i], "missing from the object");
      const bool number = found[i]->kind == FlatJsonValue::kNumber;
      const bool text_time = i == 0 && found[i]->kind == FlatJsonValue::kString;
      if (!number && !text_time) {
        throw InputError(path, line, *names[i],
                         "expected a number, got " + printable(found[i]->text, 32));
      }
    }
    if (s.unit == TimestampUnit::kAuto) {
      s.unit = found[0]->kind == FlatJsonValue::kString ? TimestampUnit::kDatetime
                                                        : TimestampUnit::kSeconds;
    }
    const std::string_view* ids = nullptr;
    if (!s.columns.hash_ids.empty() && found[3] != nullptr) {
      if (found[3]->kind != FlatJsonValue::kArray) {
        throw InputError(path, line, s.columns.hash_ids, "expected a list of block ids");
      }
      ids = &found[3]->text;
    }
    builder.add(line, found[0]->text, found[1]->text, found[2]->text, ids);
  }
  trace.timestamp_unit = to_string(s.unit);
  finish(trace, s, line);
  return trace;
}

Trace read_trace(const TraceSource& given) {
  const TraceSource source = resolve_source(given);
  if (source.format == "azure-csv" && source.filters.empty() &&
      source.columns.timestamp == "TIMESTAMP" && source.unit == TimestampUnit::kDatetime) {
    return read_azure_csv(source.path);
  }
  if (source.format == "aiperf-jsonl") return read_aiperf_trace(source);
  if (source.format == "mooncake-jsonl" || source.format == "jsonl")
    return read_jsonl_trace(source);
  return read_csv_trace(source);
}

}  // namespace infersim
