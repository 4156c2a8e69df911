// Reading a token-id trace (format `token-ids-jsonl`): one JSON object a line
// with `input_toks`, `output_toks`, `arrival_time_ns` (ns) and the prompt's
// token ids `input_tok_ids` (`output_tok_ids`, the answer's, is not used). The
// prompt's full 16-token blocks get chained block ids (BATCHING.md section 3),
// kept as Trace::hash_ids with block_id_tokens 16.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>

#include "trace/trace.hpp"
#include "trace/trace_source.hpp"

namespace infersim {

// Dense ids for chained blocks of kTokenIdBlockTokens tokens: two blocks get
// the same id iff their tokens are equal and the blocks before them have the
// same id (so iff every token up to their end is equal). A map keyed by the
// previous block's id and the tokens, so exact: no hash can collide.
class ChainedBlockIds {
 public:
  static constexpr std::uint32_t kNone = 0xffffffff;  // "before a prompt's first block"
  // The id of the block `tokens` after the block `previous` (kNone for a
  // prompt's first): 0, 1, 2, ... in order of first appearance.
  std::uint32_t id_of(std::uint32_t previous,
                      std::span<const std::uint32_t, kTokenIdBlockTokens> tokens);
  std::size_t size() const { return ids_.size(); }

 private:
  using Key = std::array<std::uint32_t, kTokenIdBlockTokens + 1>;  // previous id, tokens
  struct KeyHash {
    std::size_t operator()(const Key& key) const;
  };
  std::unordered_map<Key, std::uint32_t, KeyHash> ids_;
};

// True when a JSON line has the keys of a token-id record, for detection.
bool looks_like_token_ids_record(const std::string& line);

// Reads and normalizes the trace. p is input_toks, which must equal the
// number of input_tok_ids. Throws InputError naming the file, line and field
// of the first bad value.
Trace read_token_ids_trace(const TraceSource& source);

}  // namespace infersim
