// Reading any supported trace: Azure LLM CSV, Mooncake JSONL, BurstGPT CSV,
// aiperf and token-id JSONL, and CSV or JSONL with named columns. `auto` decides the format from
// the extension and the header or first object, and the unit from the format (or the first
// timestamp for generic files); the Trace records what was used.
#pragma once

#include <string_view>

#include "trace/trace.hpp"
#include "trace/trace_source.hpp"

namespace infersim {

// Reads and normalizes (origin, stable sort) the trace. Throws InputError
// naming the file, line and field of the first bad value.
Trace read_trace(const TraceSource& source);

// The format `auto` resolves to for this file, with its default columns and
// unit filled in where the source leaves them empty; throws InputError when
// the file cannot be read or its columns cannot be told.
TraceSource resolve_source(const TraceSource& source);

// Generic readers behind read_trace, for a resolved source. The CSV reader
// reads fields as RFC 4180 has them (csv_rows.hpp); given `bytes`, it reads
// them rather than the file.
Trace read_csv_trace(const TraceSource& source);
Trace read_csv_trace(const TraceSource& source, std::string_view bytes);
Trace read_jsonl_trace(const TraceSource& source);

}  // namespace infersim
