#include "trace/aiperf_reader.hpp"

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"

namespace infersim {
namespace {

using nlohmann::json;

// A metric's value in seconds from {"value": x, "unit": "ms" | "us" | "ns" | "s"}.
std::optional<double> seconds_metric(const json& metrics, const char* name, const std::string& path,
                                     std::uint64_t line) {
  const std::string field = std::string("metrics.") + name;
  if (!metrics.contains(name) || metrics[name].is_null()) return std::nullopt;
  const json& m = metrics[name];
  if (!m.is_object() || !m.contains("value") || !m["value"].is_number()) {
    throw InputError(path, line, field, "expected {\"value\": number, \"unit\": ...}");
  }
  const double value = m["value"].get<double>();
  const std::string unit = m.contains("unit") && m["unit"].is_string()
                               ? m["unit"].get<std::string>()
                               : std::string("ms");
  double scale = 0;
  if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "us") {
    scale = 1e-6;
  } else if (unit == "ns") {
    scale = 1e-9;
  } else if (unit == "s" || unit == "sec") {
    scale = 1;
  } else {
    throw InputError(path, line, field + ".unit",
                     "unknown time unit '" + unit + "': expected ms, us, ns or s");
  }
  if (!std::isfinite(value) || value < 0) {
    throw InputError(path, line, field, "expected a time of at least 0");
  }
  return value * scale;
}

std::optional<std::uint32_t> token_metric(const json& metrics, const char* name,
                                          const std::string& path, std::uint64_t line) {
  const std::string field = std::string("metrics.") + name;
  if (!metrics.contains(name) || metrics[name].is_null()) return std::nullopt;
  const json& m = metrics[name];
  if (!m.is_object() || !m.contains("value") || !m["value"].is_number()) {
    throw InputError(path, line, field, "expected {\"value\": number, \"unit\": \"tokens\"}");
  }
  const double value = m["value"].get<double>();
  if (!(value >= 0 && value <= 4294967295.0) || value != std::floor(value)) {
    throw InputError(path, line, field, "expected a whole number of tokens");
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace

bool looks_like_aiperf_record(const std::string& line) {
  return line.find("\"metrics\"") != std::string::npos &&
         line.find("\"metadata\"") != std::string::npos;
}

AiperfExport read_aiperf_export(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open the file");
  AiperfExport out;
  std::string text;
  std::uint64_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (line == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    json record;
    try {
      record = json::parse(text);
    } catch (const json::exception& e) {  // a syntax error or a number out of range
      throw InputError(path, line, "", std::string("not a JSON object: ") + e.what());
    }
    if (!record.is_object()) throw InputError(path, line, "", "expected a JSON object");
    if (record.contains("error") && !record["error"].is_null()) {
      ++out.errors;
      continue;
    }
    if (!record.contains("metrics") || !record["metrics"].is_object()) {
      throw InputError(path, line, "metrics",
                       "missing from the record (is this aiperf's profile_export.jsonl?)");
    }
    if (!record.contains("metadata") || !record["metadata"].is_object()) {
      throw InputError(path, line, "metadata", "missing from the record");
    }
    const json& metadata = record["metadata"];
    const json& metrics = record["metrics"];
    AiperfRecord r;
    r.line = line;
    if (!metadata.contains("request_start_ns") ||
        !metadata["request_start_ns"].is_number_integer()) {
      throw InputError(path, line, "metadata.request_start_ns", "expected an integer count of ns");
    }
    r.start_ns = metadata["request_start_ns"].get<std::int64_t>();
    const auto input = token_metric(metrics, "input_sequence_length", path, line);
    if (!input) throw InputError(path, line, "metrics.input_sequence_length", "missing");
    auto output = token_metric(metrics, "output_sequence_length", path, line);
    if (!output) output = token_metric(metrics, "output_token_count", path, line);
    if (!output) throw InputError(path, line, "metrics.output_sequence_length", "missing");
    r.input_tokens = *input;
    r.output_tokens = *output;
    r.ttft_s = seconds_metric(metrics, "time_to_first_token", path, line);
    r.latency_s = seconds_metric(metrics, "request_latency", path, line);
    out.records.push_back(r);
  }
  if (out.records.empty()) {
    throw InputError(path, line + 1, "",
                     out.errors > 0 ? "every record has an error; no request to read"
                                    : "no records in the file");
  }
  return out;
}

Trace read_aiperf_trace(const TraceSource& source) {
  if (!source.filters.empty()) {
    throw InputError(source.path, 0, "--filter",
                     "filters apply to CSV columns; this trace is aiperf JSONL");
  }
  const AiperfExport exported = read_aiperf_export(source.path);
  Trace trace;
  trace.path = source.path;
  trace.format = "aiperf-jsonl";
  trace.timestamp_unit = "ns";
  trace.filtered_out = exported.errors;
  trace.records.reserve(exported.records.size());
  for (const AiperfRecord& r : exported.records) {
    TraceRecord record;
    record.offset_ns = r.start_ns;
    record.context_tokens = r.input_tokens;
    record.generated_tokens = r.output_tokens;
    trace.records.push_back(record);
  }
  normalize_trace(trace);
  return trace;
}

}  // namespace infersim
