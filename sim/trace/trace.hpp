// A trace in memory: the records of one file in arrival order (MODEL.md
// section 2), with the origin and the facts about the file a run reports.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/large_array.hpp"

namespace infersim {

// One recorded request. offset_ns is relative to the trace's origin (the
// smallest timestamp in the file).
struct TraceRecord {
  std::int64_t offset_ns = 0;
  std::uint32_t context_tokens = 0;
  std::uint32_t generated_tokens = 0;
};

// Prompt tokens one block id covers (BATCHING.md section 3): Mooncake's
// hash_ids, and the ids derived from a token-id trace's 16-token blocks.
inline constexpr std::uint32_t kMooncakeBlockTokens = 512;
inline constexpr std::uint32_t kTokenIdBlockTokens = 16;

// Where a record's prompt block ids (Mooncake hash_ids) lie in Trace::hash_ids.
struct HashRange {
  std::uint32_t begin = 0;
  std::uint32_t count = 0;
};

struct Trace {
  std::string path;
  std::string format;          // e.g. "azure-csv"
  std::string timestamp_unit;  // as read: "datetime", "ms", ...
  std::int64_t origin_ns = 0;  // absolute time of offset 0, ns since 1970-01-01 UTC
  LargeVector<TraceRecord> records;
  std::vector<std::uint32_t> hash_ids;  // every record's block ids, back to back
  // Empty for a trace without block ids, else one a record: its ids.
  std::vector<HashRange> hash_ranges;
  // The prompt tokens one id covers (Bh): 512 for Mooncake's hash_ids (and
  // ids from a generic trace's column), 16 for token-id traces, 0 without ids.
  std::uint32_t block_id_tokens = 0;
  std::uint64_t filtered_out = 0;  // rows a --filter did not keep
  std::uint64_t out_of_order = 0;  // lines whose timestamp was earlier than the line before
  unsigned read_threads = 1;       // the threads that read the file

  std::uint64_t total_context_tokens() const;
  std::uint64_t total_generated_tokens() const;
  // Record i's block ids (none for a trace without them); throws
  // std::invalid_argument when its range lies outside hash_ids.
  std::span<const std::uint32_t> hash_ids_of(std::size_t i) const;
};

// Takes records holding absolute timestamps in offset_ns, subtracts the
// smallest, and stably sorts them by offset (their hash ranges with them);
// counts the lines out of order.
void normalize_trace(Trace& trace);

}  // namespace infersim
