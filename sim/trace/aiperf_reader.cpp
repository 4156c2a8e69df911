#include "trace/aiperf_reader.hpp"

#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>

#include "core/input_error.hpp"
#include "core/mapped_file.hpp"
#include "trace/json_lines.hpp"
#include "trace/record_fields.hpp"

namespace infersim {
namespace {

namespace od = jsonl::od;

// A metric as read, {"value": x, "unit": "ms"}; checked against what it
// measures only for a record without an error, whose metrics count.
struct Metric {
  bool present = false;    // not missing, not null
  bool has_value = false;  // an object with a number "value"
  double value = 0;
  std::optional<std::string> unit;  // when "unit" is a string
};

Metric read_metric(const jsonl::JsonLines& lines, const std::string& field, od::value value) {
  Metric m;
  bool null = false;
  if (!value.is_null().get(null) && null) return m;
  m.present = true;
  od::object object;
  if (value.get_object().get(object)) {
    jsonl::check_value(lines, field, value);  // not an object: still JSON?
    return m;
  }
  jsonl::SeenKeys seen;
  for (auto member : object) {
    od::field inner;
    if (const auto error = std::move(member).get(inner)) lines.fail(field, error);
    const std::string_view key = seen.take(lines, inner, field + ".");
    if (key == "value") {
      od::value v = inner.value();
      double number = 0;
      if (!v.get_double().get(number)) {
        m.has_value = true;
        m.value = number;
      } else {
        jsonl::check_value(lines, field + ".value", v);
      }
    } else if (key == "unit") {
      od::value v = inner.value();
      std::string_view text;
      if (!v.get_string().get(text)) {
        m.unit = std::string(text);
      } else {
        jsonl::check_value(lines, field + ".unit", v);
      }
    } else {
      jsonl::check_value(lines, field + "." + printable(key), inner.value());
    }
  }
  return m;
}

// A metric's value in seconds from {"value": x, "unit": "ms" | "us" | "ns" | "s"}.
std::optional<double> seconds_metric(const Metric& m, const char* name, const std::string& path,
                                     std::uint64_t line) {
  const std::string field = std::string("metrics.") + name;
  if (!m.present) return std::nullopt;
  if (!m.has_value)
    throw InputError(path, line, field, "expected {\"value\": number, \"unit\": ...}");
  const std::string unit = m.unit.value_or("ms");
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
                     "unknown time unit '" + printable(unit, 32) + "': expected ms, us, ns or s");
  }
  if (!std::isfinite(m.value) || m.value < 0) {
    throw InputError(path, line, field, "expected a time of at least 0");
  }
  return m.value * scale;
}

std::optional<std::uint32_t> token_metric(const Metric& m, const char* name,
                                          const std::string& path, std::uint64_t line) {
  const std::string field = std::string("metrics.") + name;
  if (!m.present) return std::nullopt;
  if (!m.has_value) {
    throw InputError(path, line, field, "expected {\"value\": number, \"unit\": \"tokens\"}");
  }
  if (!(m.value >= 0 && m.value <= 4294967295.0) || m.value != std::floor(m.value)) {
    throw InputError(path, line, field, "expected a whole number of tokens");
  }
  return static_cast<std::uint32_t>(m.value);
}

// The metrics a record is read for, by their names under `metrics`.
constexpr const char* kMetrics[] = {"input_sequence_length", "output_sequence_length",
                                    "output_token_count", "time_to_first_token", "request_latency"};
constexpr std::size_t kMetricCount = std::size(kMetrics);

}  // namespace

bool looks_like_aiperf_record(const std::string& line) {
  return line.find("\"metrics\"") != std::string::npos &&
         line.find("\"metadata\"") != std::string::npos;
}

AiperfExport read_aiperf_export(const std::string& path) {
  const std::unique_ptr<MappedFile> file = map_input_file(path);
  AiperfExport out;
  jsonl::JsonLines lines(file->bytes(), path);
  od::document document;
  while (lines.next(document)) {
    od::object object = jsonl::root_object(lines, document);
    jsonl::SeenKeys seen;
    bool failed = false;  // a non-null "error"
    bool has_metrics = false, has_metadata = false;
    std::optional<std::int64_t> start_ns;
    bool start_is_integer = true;
    Metric metrics[kMetricCount];
    for (auto member : object) {
      od::field field;
      if (const auto error = std::move(member).get(field)) lines.fail("", error);
      const std::string_view key = seen.take(lines, field, "");
      if (key == "error") {
        od::value value = field.value();
        bool null = false;
        failed = value.is_null().get(null) || !null;
        if (failed) jsonl::check_value(lines, "error", value);
      } else if (key == "metadata" || key == "metrics") {
        const std::string name(key);
        od::value value = field.value();
        od::object inner;
        if (value.get_object().get(inner)) {
          jsonl::check_value(lines, name, value);
          continue;
        }
        (key == "metadata" ? has_metadata : has_metrics) = true;
        jsonl::SeenKeys inner_seen;
        for (auto inner_member : inner) {
          od::field f;
          if (const auto error = std::move(inner_member).get(f)) lines.fail(name, error);
          const std::string_view inner_key = inner_seen.take(lines, f, name + ".");
          const std::string inner_name = name + "." + printable(inner_key);
          if (name == "metadata" && inner_key == "request_start_ns") {
            od::value v = f.value();
            std::int64_t ns = 0;
            if (!v.get_int64().get(ns)) {
              start_ns = ns;
            } else {
              start_is_integer = false;
              jsonl::check_value(lines, inner_name, v);
            }
            continue;
          }
          std::size_t which = 0;
          while (name == "metrics" && which < kMetricCount && inner_key != kMetrics[which])
            ++which;
          if (name == "metrics" && which < kMetricCount) {
            metrics[which] = read_metric(lines, inner_name, f.value());
          } else {
            jsonl::check_value(lines, inner_name, f.value());
          }
        }
      } else {
        jsonl::check_value(lines, printable(key), field.value());
      }
    }
    jsonl::expect_end(lines, document);
    const std::uint64_t line = lines.line();
    if (failed) {
      ++out.errors;
      continue;
    }
    if (!has_metrics) {
      throw InputError(path, line, "metrics",
                       "missing from the record (is this aiperf's profile_export.jsonl?)");
    }
    if (!has_metadata) throw InputError(path, line, "metadata", "missing from the record");
    if (!start_ns || !start_is_integer) {
      throw InputError(path, line, "metadata.request_start_ns", "expected an integer count of ns");
    }
    // aiperf writes the wall clock in nanoseconds since the epoch: 0 (or less)
    // is no instant, and would stretch the run back to 1970.
    if (*start_ns <= 0) {
      throw InputError(path, line, "metadata.request_start_ns",
                       "must be nanoseconds since the epoch (aiperf's wall clock), got " +
                           std::to_string(*start_ns));
    }
    AiperfRecord r;
    r.line = line;
    r.start_ns = *start_ns;
    const auto input = token_metric(metrics[0], kMetrics[0], path, line);
    if (!input) throw InputError(path, line, "metrics.input_sequence_length", "missing");
    auto output = token_metric(metrics[1], kMetrics[1], path, line);
    if (!output) output = token_metric(metrics[2], kMetrics[2], path, line);
    if (!output) throw InputError(path, line, "metrics.output_sequence_length", "missing");
    r.input_tokens = *input;
    r.output_tokens = *output;
    r.ttft_s = seconds_metric(metrics[3], kMetrics[3], path, line);
    r.latency_s = seconds_metric(metrics[4], kMetrics[4], path, line);
    out.records.push_back(r);
  }
  if (out.records.empty()) {
    throw InputError(path, lines.line() + 1, "",
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
