#include "trace/token_ids_reader.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/input_error.hpp"
#include "core/mapped_file.hpp"
#include "trace/json_lines.hpp"
#include "trace/record_fields.hpp"

namespace infersim {

std::size_t PromptBlocks::KeyHash::operator()(const Key& key) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const std::uint32_t word : key) {
    h = (h ^ word) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  return static_cast<std::size_t>(h);
}

std::uint32_t PromptBlocks::id_of(std::uint32_t previous,
                                  std::span<const std::uint32_t, kTokenIdBlockTokens> tokens) {
  Key key;
  key[0] = previous;
  std::copy(tokens.begin(), tokens.end(), key.begin() + 1);
  // The next id must not be kNone.
  if (ids_.size() >= kNone) throw std::length_error("PromptBlocks: more than 2^32 - 1 blocks");
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
  const TimestampUnit unit =
      source.unit == TimestampUnit::kAuto ? TimestampUnit::kNanoseconds : source.unit;
  Trace trace;
  trace.path = path;
  trace.format = "token-ids-jsonl";
  trace.timestamp_unit = to_string(unit);
  jsonl::JsonLines lines(file->bytes(), path);
  jsonl::od::document document;
  PromptBlocks blocks;
  std::vector<std::uint32_t> tokens;
  constexpr const char* kKeys[4] = {"arrival_time_ns", "input_toks", "output_toks",
                                    "input_tok_ids"};
  while (lines.next(document)) {
    jsonl::od::object object = jsonl::root_object(lines, document);
    jsonl::SeenKeys seen;
    TraceRecord record;
    bool found[4] = {false, false, false, false};
    tokens.clear();
    for (auto member : object) {
      jsonl::od::field field;
      if (const auto error = std::move(member).get(field)) lines.fail("", error);
      const std::string_view key = seen.take(lines, field, "");
      int which = 0;
      while (which < 4 && key != kKeys[which])
        ++which;
      if (which < 4) found[which] = true;
      switch (which) {
        case 0: {
          const std::string error = parse_timestamp_field(
              jsonl::number_text(lines, key, field.value(), false), unit, record.offset_ns);
          if (!error.empty()) lines.fail(key, error);
          break;
        }
        case 1:
          record.context_tokens = jsonl::token_count(lines, key, field.value());
          break;
        case 2:
          record.generated_tokens = jsonl::token_count(lines, key, field.value());
          break;
        case 3:
          jsonl::append_ids(lines, key, field.value(), "token ids", tokens);
          break;
        default:
          jsonl::check_value(lines, printable(key), field.value());
      }
    }
    jsonl::expect_end(lines, document);
    for (int i = 0; i < 4; ++i) {
      if (!found[i]) lines.fail(kKeys[i], "missing from the object");
    }
    // The prompt is input_toks long (BATCHING.md section 3); ids of another
    // length would give its blocks to a prompt they do not belong to.
    if (tokens.size() != record.context_tokens) {
      lines.fail("input_tok_ids", "holds " + std::to_string(tokens.size()) +
                                      " token ids, input_toks says " +
                                      std::to_string(record.context_tokens));
    }
    const auto begin = static_cast<std::uint32_t>(trace.hash_ids.size());
    std::uint32_t previous = PromptBlocks::kNone;
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
