// Reading a benchmark's per-request measurements: aiperf's profile_export.jsonl,
// a `vllm bench serve` result saved with its per-request arrays, or a plain CSV
// `input_tokens,output_tokens,ttft_s,e2e_s`. What `calibrate` fits and what
// `run --measured` compares the replay with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infersim {

// One request as it was measured; times in seconds from the request's start.
struct MeasuredRequest {
  std::uint64_t line = 0;  // where it was read (CSV and JSONL: the line; vLLM: index + 1)
  double input_tokens = 0;
  double output_tokens = 0;
  double ttft_s = 0;
  double e2e_s = 0;
  std::optional<std::int64_t> start_ns;  // aiperf: ns since the epoch
};

struct Measurement {
  std::string path;
  std::string format;  // aiperf, vllm or csv
  // aiperf: stably sorted by start time, the order a replay of the same file
  // issues them in; the others in file order.
  std::vector<MeasuredRequest> requests;
  std::uint64_t skipped_errors = 0;  // failed requests, left out
};

// `format` is auto, aiperf, vllm or csv; auto decides by the extension (.jsonl,
// .json, .csv) and else by the content. Throws InputError naming the file,
// line and field of the first bad value, or when no request is left.
Measurement read_measurement(const std::string& path, const std::string& format = "auto");

// The format `auto` resolves to for this file.
std::string detect_measurement_format(const std::string& path);

}  // namespace infersim
