// What each fuzz target does with one input, shared by the libFuzzer targets
// and the unit test that replays the kept regressions: write the bytes to a
// file (the readers take paths), read it, and let only InputError through as
// an answer. Any other exception, or a trace that breaks the reader's
// promises (records in time order from offset 0), is a bug.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "scenario/settings.hpp"
#include "trace/azure_csv_reader.hpp"
#include "trace/trace_reader.hpp"

namespace infersim::fuzz {

enum class Target { kAzureCsv, kMooncakeJsonl, kGenericColumns, kSettings };

// The targets by the names of their folders under corpus/ and regressions/.
inline const char* name_of(Target target) {
  switch (target) {
    case Target::kAzureCsv:
      return "azure_csv_fuzz";
    case Target::kMooncakeJsonl:
      return "mooncake_jsonl_fuzz";
    case Target::kGenericColumns:
      return "generic_columns_fuzz";
    case Target::kSettings:
      return "settings_fuzz";
  }
  return "";
}

// The folder write_input writes to: the temporary folder ($TMPDIR, which
// run_fuzzers.sh points into each target's work folder) unless set; the unit
// test that replays the kept inputs sets its own test folder.
inline std::filesystem::path& input_dir() {
  static std::filesystem::path dir;
  return dir;
}

// A file of this process's own, so parallel fuzzing jobs do not share one.
inline std::string write_input(std::string_view bytes, const std::string& extension) {
  const std::filesystem::path dir =
      input_dir().empty() ? std::filesystem::temp_directory_path() : input_dir();
  const std::filesystem::path path =
      dir / ("infersim-fuzz-" + std::to_string(::getpid()) + extension);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) std::abort();
  return path.string();
}

// A trace that was read must be what the simulator expects.
inline void check_trace(const Trace& trace) {
  if (trace.records.empty()) std::abort();
  std::int64_t previous = 0;
  if (!trace.hash_ranges.empty() && trace.hash_ranges.size() != trace.records.size()) std::abort();
  for (std::size_t i = 0; i < trace.records.size(); ++i) {
    const TraceRecord& r = trace.records[i];
    if (r.offset_ns < previous) std::abort();
    if (!trace.hash_ranges.empty()) {
      const HashRange h = trace.hash_ranges[i];
      if (std::uint64_t{h.begin} + h.count > trace.hash_ids.size()) std::abort();
    }
    previous = r.offset_ns;
  }
  if (trace.records.front().offset_ns != 0) std::abort();
  // Block ids and the tokens one covers come together.
  if (trace.hash_ids.empty() != (trace.block_id_tokens == 0)) std::abort();
}

template <typename Read>
void accept_input_errors(Read read) {
  try {
    read();
  } catch (const InputError&) {
    // the answer to bad input
  }
}

inline void read_trace_as(const std::string& path, const std::string& format,
                          TraceSource source = {}) {
  source.path = path;
  source.format = format;
  accept_input_errors([&] { check_trace(read_trace(source)); });
}

inline void azure_csv(std::string_view bytes) {
  const std::string path = write_input(bytes, ".csv");
  accept_input_errors([&] { check_trace(read_azure_csv(path)); });
  read_trace_as(path, "auto");
  // The generic CSV reader on the same columns (another parser).
  TraceSource generic;
  generic.columns = {"TIMESTAMP", "ContextTokens", "GeneratedTokens", ""};
  generic.unit = TimestampUnit::kDatetime;
  read_trace_as(path, "csv", generic);
}

inline void mooncake_jsonl(std::string_view bytes) {
  const std::string path = write_input(bytes, ".jsonl");
  read_trace_as(path, "mooncake-jsonl");
  read_trace_as(path, "auto");
  // The other JSONL readers on the same bytes (the seeds hold a token-id trace).
  read_trace_as(path, "token-ids-jsonl");
  read_trace_as(path, "aiperf-jsonl");
}

// The first byte picks CSV or JSONL, the timestamp unit and whether a filter
// applies; the rest is the file, whose columns are t, in, out and ids.
inline void generic_columns(std::string_view bytes) {
  if (bytes.empty()) return;
  const auto choice = static_cast<unsigned char>(bytes.front());
  bytes.remove_prefix(1);
  const bool json = (choice & 1) != 0;
  const std::string path = write_input(bytes, json ? ".jsonl" : ".csv");
  static constexpr TimestampUnit kUnits[] = {
      TimestampUnit::kAuto,         TimestampUnit::kSeconds,     TimestampUnit::kMilliseconds,
      TimestampUnit::kMicroseconds, TimestampUnit::kNanoseconds, TimestampUnit::kDatetime};
  TraceSource source;
  source.columns = {"t", "in", "out", (choice & 2) != 0 ? "ids" : ""};
  source.unit = kUnits[(choice >> 2) % 6];
  if (!json && (choice & 0x80) != 0) source.filters.emplace_back("model", "a");
  read_trace_as(path, json ? "jsonl" : "csv", source);
  read_trace_as(path, "auto", source);
}

inline void settings(std::string_view bytes) {
  const nlohmann::json document = nlohmann::json::parse(bytes, nullptr, false);
  if (!document.is_discarded()) {
    Settings s;
    accept_input_errors([&] { apply_settings_json(s, document, "fuzz.json"); });
  }
  const std::string path = write_input(bytes, ".json");
  Settings s;
  accept_input_errors([&] { apply_settings_file(s, path); });
}

inline void run_one(Target target, const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  switch (target) {
    case Target::kAzureCsv:
      return azure_csv(bytes);
    case Target::kMooncakeJsonl:
      return mooncake_jsonl(bytes);
    case Target::kGenericColumns:
      return generic_columns(bytes);
    case Target::kSettings:
      return settings(bytes);
  }
}

}  // namespace infersim::fuzz
