#include "trace/azure_csv_reader.hpp"

#include <libfccp/csv.h>

#include <cstring>
#include <filesystem>
#include <string_view>

#include "core/input_error.hpp"
#include "core/large_array.hpp"
#include "trace/record_fields.hpp"
#include "trace/timestamp.hpp"

namespace infersim {

std::string parse_token_count(const char* text, std::uint32_t& out) {
  return parse_token_field(text == nullptr ? std::string_view() : std::string_view(text), out);
}

Trace read_azure_csv(const std::string& path) {
  Trace trace;
  trace.path = path;
  trace.format = "azure-csv";
  trace.timestamp_unit = "datetime";
  try {
    io::CSVReader<3, io::trim_chars<' ', '\t'>, io::no_quote_escape<','>> in(path);
    // A line holds at least "YYYY-MM-DD HH:MM:SS,0,0\n" (24 bytes): room for
    // every record at once, touched only as far as it is filled.
    std::error_code size_error;
    const std::uintmax_t bytes = std::filesystem::file_size(path, size_error);
    if (!size_error) reserve_large(trace.records, static_cast<std::size_t>(bytes / 24 + 1));
    in.read_header(io::ignore_extra_column, "TIMESTAMP", "ContextTokens", "GeneratedTokens");
    char* timestamp = nullptr;
    char* context = nullptr;
    char* generated = nullptr;
    while (in.read_row(timestamp, context, generated)) {
      const std::uint64_t line = in.get_file_line();
      TraceRecord record;
      const TimestampParse when = parse_datetime_ns(timestamp);
      if (!when.error.empty()) throw InputError(path, line, "TIMESTAMP", when.error);
      record.offset_ns = when.ns;
      std::string error = parse_token_count(context, record.context_tokens);
      if (!error.empty()) throw InputError(path, line, "ContextTokens", error);
      error = parse_token_count(generated, record.generated_tokens);
      if (!error.empty()) throw InputError(path, line, "GeneratedTokens", error);
      trace.records.push_back(record);
    }
  } catch (const io::error::can_not_open_file&) {
    throw InputError(
        path, 0, "",
        "cannot open the trace file (the published traces are fetched by trace/fetch)");
  } catch (const io::error::header_missing&) {
    throw InputError(path, 1, "",
                     "empty file: expected a header TIMESTAMP,ContextTokens,GeneratedTokens");
  } catch (const io::error::missing_column_in_header& e) {
    throw InputError(path, 1, e.column_name, "column missing from the header");
  } catch (const io::error::duplicated_column_in_header& e) {
    throw InputError(path, 1, e.column_name, "column appears twice in the header");
  } catch (const io::error::too_few_columns& e) {
    throw InputError(path, static_cast<std::uint64_t>(e.file_line), "",
                     "too few fields on the line");
  } catch (const io::error::too_many_columns& e) {
    throw InputError(path, static_cast<std::uint64_t>(e.file_line), "",
                     "too many fields on the line");
  } catch (const io::error::line_length_limit_exceeded& e) {
    throw InputError(path, static_cast<std::uint64_t>(e.file_line), "",
                     "line too long for a CSV line (is this a CSV file?)");
  } catch (const io::error::base& e) {
    throw InputError(path, 0, "", e.what());
  }
  if (trace.records.empty()) throw InputError(path, 2, "", "no requests after the header");
  normalize_trace(trace);
  return trace;
}

}  // namespace infersim
