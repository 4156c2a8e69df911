// What a trace asks of a service before any simulation: how many requests, how
// fast and how bursty they arrive, how large they are, and how much of their
// prompts an unbounded prefix cache would find already computed.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "trace/trace.hpp"

namespace infersim {

// A token count's distribution over the requests; percentiles interpolate
// linearly at (n-1)*q, as NumPy's default (MODEL.md section 8).
struct TokenStats {
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  std::uint64_t max = 0;
};

// Prompt blocks (Mooncake hash_ids) over every request.
struct BlockReuse {
  std::uint64_t blocks_seen = 0;      // ids over all requests, repeats included
  std::uint64_t distinct_blocks = 0;  // different ids
  // Share of blocks_seen whose id an earlier block of the trace already had: the
  // hit rate of a prefix cache that never evicts.
  double block_reuse = 0;
};

// Figures that do not exist for the trace (a rate over a zero span, gaps of a
// single request, dispersion over a single window) are none.
struct WorkloadProfile {
  std::uint64_t requests = 0;
  double span_s = 0;                    // last offset minus first
  std::optional<double> mean_rate_rps;  // requests / span_s
  // Most requests in one window [k*w, (k+1)*w) of offset, w = 1 s and 60 s.
  std::uint64_t peak_per_second = 0;
  std::uint64_t peak_per_minute = 0;
  // Population standard deviation over mean of the gaps between consecutive
  // arrivals; 1 for Poisson arrivals, 0 for a regular clock.
  std::optional<double> interarrival_cv;
  std::optional<double> longest_gap_s;
  // Population variance over mean of the request counts in every window
  // [k*w, (k+1)*w) from offset 0 to the last arrival inclusive; 1 for Poisson
  // arrivals, below 1 for regular ones, above 1 for bursts.
  std::optional<double> index_of_dispersion_1s;
  std::optional<double> index_of_dispersion_10s;
  std::optional<double> index_of_dispersion_60s;
  TokenStats input_tokens;           // context tokens
  TokenStats output_tokens;          // generated tokens
  std::optional<BlockReuse> blocks;  // none when no record has hash ids
};

// The profile of the trace's records, which must be in offset order with
// offsets >= 0 (as read_trace leaves them; std::invalid_argument otherwise).
// An empty trace gives requests = 0 and every other figure zero or none.
WorkloadProfile profile_workload(const Trace& trace);

// The figures under their names, token stats as nested objects, figures that
// do not exist (and the block figures of a trace without hash ids) as null.
nlohmann::ordered_json workload_profile_to_json(const WorkloadProfile& profile);

}  // namespace infersim
