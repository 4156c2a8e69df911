// A task: one request as the server sees it, derived from its token counts by
// the cost and deadline knobs (MODEL.md section 5).
#pragma once

#include <cstdint>
#include <span>

#include "core/sim_time.hpp"

namespace infersim {

struct RequestKnobs {
  double bytes_per_token = 4;
  double mi_per_context_token = 12;
  double mi_per_generated_token = 2000;
  double ttft_budget_s = 2;
  double decode_budget_s = 0.1;
  double mips_per_core = 60000;
};

struct Request {
  SimTime arrival;
  double context_tokens = 0;  // whole numbers for recorded requests, reals for mean sizes
  double generated_tokens = 0;
  double length_mi = 0;
  Duration exec;         // on one core
  Duration first_token;  // from start to the first generated token leaving the core
  double request_bits = 0;
  double result_bits = 0;
  Duration budget;  // the deadline, relative to arrival
  // The prompt's block identities (BATCHING.md section 3): ids[i] covers the
  // prompt's tokens [i*block_id_tokens, (i+1)*block_id_tokens). Empty for a
  // request without them; the ids live as long as the run's trace.
  std::span<const std::uint32_t> block_ids;
  std::uint32_t block_id_tokens = 0;  // Bh: 512 for Mooncake's hash_ids, 16 for token ids
};

// MODEL.md section 5, written out term by term in the order the spec gives.
inline Request make_request(SimTime arrival, double context_tokens, double generated_tokens,
                            const RequestKnobs& k) {
  Request task;
  task.arrival = arrival;
  task.context_tokens = context_tokens;
  task.generated_tokens = generated_tokens;
  task.length_mi =
      context_tokens * k.mi_per_context_token + generated_tokens * k.mi_per_generated_token;
  task.exec = Duration::from_seconds(task.length_mi / k.mips_per_core);
  task.first_token = generated_tokens >= 1
                         ? Duration::from_seconds((context_tokens * k.mi_per_context_token +
                                                   k.mi_per_generated_token) /
                                                  k.mips_per_core)
                         : task.exec;
  task.request_bits = context_tokens * k.bytes_per_token * 8;
  task.result_bits = generated_tokens * k.bytes_per_token * 8;
  task.budget = Duration::from_seconds(k.ttft_budget_s + k.decode_budget_s * generated_tokens);
  return task;
}

}  // namespace infersim
