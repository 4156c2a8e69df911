// Reading aiperf's per-request export, profile_export.jsonl: one nested JSON
// record a line, with `metadata.request_start_ns` and `metrics.<name>` objects
// of the form {"value": x, "unit": "ms"}. Records with a non-null `error` are
// skipped and counted. It serves both as a trace (format `aiperf-jsonl`) and as
// a measurement to calibrate from or compare with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace.hpp"
#include "trace/trace_source.hpp"

namespace infersim {

// One successful request as aiperf measured it.
struct AiperfRecord {
  std::uint64_t line = 0;
  std::int64_t start_ns = 0;  // metadata.request_start_ns, ns since the epoch
  std::uint32_t input_tokens = 0;
  std::uint32_t output_tokens = 0;
  std::optional<double> ttft_s;     // metrics.time_to_first_token (streaming runs only)
  std::optional<double> latency_s;  // metrics.request_latency
};

struct AiperfExport {
  std::vector<AiperfRecord> records;  // in file order
  std::uint64_t errors = 0;           // records with an error, skipped
};

// True when a JSON line looks like an aiperf record (a `metrics` and a
// `metadata` object), for format detection.
bool looks_like_aiperf_record(const std::string& line);

// Reads every record. Throws InputError naming the file, line and field of the
// first bad value, or when no record is left.
AiperfExport read_aiperf_export(const std::string& path);

// The export as a trace: arrival = request_start_ns, sizes from
// input_sequence_length and output_sequence_length; error records counted in
// Trace::filtered_out.
Trace read_aiperf_trace(const TraceSource& source);

}  // namespace infersim
