// A request as the workload gives it: when it arrives, its tokens, the bits it
// sends and receives and its deadline (MODEL.md section 5), and its prompt's
// block ids where the trace has them.
#pragma once

#include <cstdint>
#include <span>

#include "core/sim_time.hpp"

namespace infersim {

// What the workload says of a request, and nothing a particular server makes
// of it (the edge server's cost in MI is its own, model/edge_server.hpp).
struct Request {
  SimTime arrival;
  double context_tokens = 0;  // whole numbers for recorded requests, reals for mean sizes
  double generated_tokens = 0;
  double request_bits = 0;
  double result_bits = 0;
  Duration budget;  // the deadline, relative to arrival
  // The prompt's block identities (BATCHING.md section 3): ids[i] covers the
  // prompt's tokens [i*block_id_tokens, (i+1)*block_id_tokens). Empty for a
  // request without them; the ids live as long as the run's trace.
  std::span<const std::uint32_t> block_ids;
  std::uint32_t block_id_tokens = 0;  // Bh: 512 for Mooncake's hash_ids, 16 for token ids
};

// What make_request turns a request's token counts into: the bytes a token
// takes on the wire, and the deadline's fixed part and its part per generated
// token.
struct RequestKnobs {
  double bytes_per_token = 4;
  double ttft_budget_s = 2;
  double decode_budget_s = 0.1;
};

// MODEL.md section 5's sizes and deadline, written out term by term in the
// order the spec gives.
inline Request make_request(SimTime arrival, double context_tokens, double generated_tokens,
                            const RequestKnobs& k) {
  Request request;
  request.arrival = arrival;
  request.context_tokens = context_tokens;
  request.generated_tokens = generated_tokens;
  request.request_bits = context_tokens * k.bytes_per_token * 8;
  request.result_bits = generated_tokens * k.bytes_per_token * 8;
  request.budget = Duration::from_seconds(k.ttft_budget_s + k.decode_budget_s * generated_tokens);
  return request;
}

}  // namespace infersim
