// Reader of the Azure LLM inference trace CSV (2023 and 2024 releases):
// columns TIMESTAMP, ContextTokens, GeneratedTokens in any order (others are
// ignored), LF or CRLF, an optional UTF-8 BOM, with or without a final newline,
// blank lines at the end. Read in place; a file with quotes is read as RFC
// 4180 has it (csv_rows.hpp).
#pragma once

#include <string>

#include "trace/trace.hpp"

namespace infersim {

// Reads and normalizes the file (MODEL.md section 2). Throws InputError naming
// the file, line and field of the first bad value.
// `threads` as TraceSource::read_threads.
Trace read_azure_csv(const std::string& path, unsigned threads = 0);

// Parses a token count field: a non-negative integer that fits in 32 bits.
// Returns an empty string on success, else what is wrong.
std::string parse_token_count(const char* text, std::uint32_t& out);

}  // namespace infersim
