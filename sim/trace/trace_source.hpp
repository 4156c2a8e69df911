// Where a trace comes from and how to read it: the file, its format, which
// column (CSV) or key (JSONL) holds each field, the timestamp's unit, and row
// filters. `auto` format and unit are decided from the file (trace_format.hpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace infersim {

enum class TimestampUnit { kAuto, kSeconds, kMilliseconds, kMicroseconds, kNanoseconds, kDatetime };

std::string to_string(TimestampUnit unit);
// "s", "ms", "us", "ns", "datetime", "auto"; false for anything else.
bool parse_timestamp_unit(const std::string& text, TimestampUnit& unit);

struct ColumnMapping {
  std::string timestamp;
  std::string input;
  std::string output;
  std::string hash_ids;  // empty: none
};

struct TraceSource {
  std::string path;
  // auto, azure-csv, mooncake-jsonl, burstgpt-csv, aiperf-jsonl, token-ids-jsonl, csv, jsonl
  std::string format = "auto";
  ColumnMapping columns;  // empty names: the format's own
  TimestampUnit unit = TimestampUnit::kAuto;
  std::vector<std::pair<std::string, std::string>> filters;  // keep rows where column == value
  // Threads a large Azure file may be read on (1 or 2; 0: two when this
  // process may use more than one CPU). The records read are the same.
  unsigned read_threads = 0;
};

}  // namespace infersim
