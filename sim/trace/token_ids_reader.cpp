#include "trace/token_ids_reader.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/input_error.hpp"
#include "core/mapped_file.hpp"
#include "trace/json_lines.hpp"

namespace infersim {

std::size_t ChainedBlockIds::KeyHash::operator()(const Key& key) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const std::uint32_t word : key) {
    h = (h ^ word) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  return static_cast<std::size_t>(h);
}

std::uint32_t ChainedBlockIds::id_of(std::uint32_t previous,
                                     std::span<const std::uint32_t, kTokenIdBlockTokens> tokens) {
  Key key;
  key[0] = previous;
  std::copy(tokens.begin(), tokens.end(), key.begin() + 1);
  // The next id must not be kNone.
  if (ids_.size() >= kNone) throw std::length_error("ChainedBlockIds: more than 2^32 - 1 blocks");
  return ids_.try_emplace(key, static_cast<std::uint32_t>(ids_.size())).first->second;
}

bool looks_like_token_ids_record(const std::string& line) {
  return line.find("\"input_tok_ids\"") != std::string::npos &&
         line.find("\"arrival_time_ns\"") != std::string::npos;
}

Trace read_token_ids_trace(const TraceSource& source) {
  const std::string& path = source.path;
  if (!source.filters.empty()) {
    throw InputError(path, 0, "--filter",
                     "filters apply to CSV columns; this trace is token-id JSONL");
  }
  std::optional<MappedFile> file;
  try {
    file.emplace(path);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, "", std::string("cannot open the trace file (") + e.what() + ")");
  }
  TimestampUnit unit =
      source.unit == TimestampUnit::kAuto ? TimestampUnit::kNanoseconds : source.unit;
  Trace trace;
  trace.path = path;
  trace.format = "token-ids-jsonl";
  trace.timestamp_unit = to_string(unit);
  jsonl::JsonLines lines(file->bytes(), path);
  jsonl::od::document document;
  ChainedBlockIds blocks;
  std::vector<std::uint32_t> tokens;
  const jsonl::RequestKeys keys{.timestamp = "arrival_time_ns",
                                .input_tokens = "input_toks",
                                .output_tokens = "output_toks",
                                .ids = "input_tok_ids",
                                .ids_what = "token ids",
                                .ids_required = true,
                                .dated = false};
  while (lines.next(document)) {
    const TraceRecord record = jsonl::read_request(lines, document, keys, unit, tokens);
    // The prompt is input_toks long (BATCHING.md section 3); ids of another
    // length would give its blocks to a prompt they do not belong to.
    if (tokens.size() != record.context_tokens) {
      lines.fail("input_tok_ids", "holds " + std::to_string(tokens.size()) +
                                      " token ids, input_toks says " +
                                      std::to_string(record.context_tokens));
    }
    const auto begin = static_cast<std::uint32_t>(trace.hash_ids.size());
    std::uint32_t previous = ChainedBlockIds::kNone;
    for (std::size_t at = 0; at + kTokenIdBlockTokens <= tokens.size(); at += kTokenIdBlockTokens) {
      previous = blocks.id_of(previous, std::span<const std::uint32_t, kTokenIdBlockTokens>(
                                            tokens.data() + at, kTokenIdBlockTokens));
      trace.hash_ids.push_back(previous);
    }
    trace.hash_ranges.push_back({begin, static_cast<std::uint32_t>(trace.hash_ids.size() - begin)});
    trace.records.push_back(record);
  }
  if (trace.records.empty())
    throw InputError(path, lines.line() + 1, "", "no requests in the file");
  trace.block_id_tokens = trace.hash_ids.empty() ? 0 : kTokenIdBlockTokens;
  normalize_trace(trace);
  return trace;
}

}  // namespace infersim
