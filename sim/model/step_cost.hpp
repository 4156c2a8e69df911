// A batching replica's step cost from what its batch holds, in one place for
// the scheduler and the calibration: BATCHING.md section 5's sum of five
// terms, and two extensions that are off by default (every term 0, the sum
// form), with which section 5 holds to the nanosecond:
// - the roofline form: a step costs its fixed part plus the larger of its
//   memory side (the weights read once, the KV the decodes read, the experts'
//   weights) and its compute side (prefill and decode tokens through the
//   weights, prefill attention), not their sum;
// - the experts a mixture-of-experts step reads: T tokens each routed to k of
//   E experts touch E (1 - (1 - k/E)^T) distinct experts on average, each
//   read once; replicas in lockstep with their experts split among them
//   (data and expert parallelism) each read their share of the experts the
//   round's tokens touch.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/sim_time.hpp"
#include "model/batching_knobs.hpp"
#include "model/server_model.hpp"
#include "model/step_table.hpp"

namespace infersim {

// What a step's batch holds (section 5's P, Q, D, A) and the tokens its
// expert layers see.
struct StepWork {
  std::uint64_t prefill_tokens = 0;   // P
  std::uint64_t prefill_pairs = 0;    // Q
  std::uint64_t decode_requests = 0;  // D
  std::uint64_t decode_context = 0;   // A
  // The tokens routed through the experts this replica holds: its own P + D,
  // or, in lockstep, the round's over every replica.
  std::uint64_t expert_tokens = 0;
  // The replicas the experts are split among (1, or the lockstep replicas).
  std::uint32_t expert_share = 1;
};

// Q of a prompt chunk (section 5): its n tokens, after `computed` tokens of
// the same request, each attend to those and to the chunk's tokens up to
// itself: n * computed + n (n + 1) / 2 pairs.
constexpr std::uint64_t prefill_pairs(std::int64_t computed, std::int64_t n) {
  return static_cast<std::uint64_t>(n * computed + n * (n + 1) / 2);
}

// The terms, in the order of the coefficients.
enum StepTerm : std::size_t {
  kStepBase,           // c0, a step (outside the roofline's max)
  kStepPrefillToken,   // cp, a prefill token (compute)
  kStepPrefillPair,    // cq, a (query, key) pair of prefill attention (compute)
  kStepDecodeToken,    // cd, a decode token (compute)
  kStepDecodeContext,  // ckv, a context token a decode reads (memory)
  kStepWeights,        // cw, the weights read once a step (memory)
  kStepExpert,         // ce, one expert's weights read (memory)
};
inline constexpr std::size_t kStepTerms = 7;
using StepCoefficients = std::array<double, kStepTerms>;
// The settings keys of the coefficients, in the same order.
inline constexpr const char* kStepTermKeys[kStepTerms] = {
    "step_base_s",           "step_prefill_token_s", "step_prefill_pair_s", "step_decode_token_s",
    "step_decode_context_s", "step_weights_s",       "step_expert_s"};

struct StepCost {
  StepCoefficients coefficients{};
  bool roofline = false;
  std::int64_t experts = 0;         // E; 0 for a dense model
  std::int64_t active_experts = 0;  // k
  StepTable table;                  // section 5c's, added last; none (empty) by default

  static StepCost of(const BatchingKnobs& knobs);

  // Each term's count for `work`: (1, P, Q, D, A, 1, X), X the experts read.
  StepCoefficients units(const StepWork& work) const;
  // X: 0 for a dense model or a step without tokens.
  double experts_read(const StepWork& work) const;
  // The step in seconds. Sum form: c0 + cp P + cq Q + cd D + ckv A + cw +
  // ce X, summed in that order (section 5's order, the extensions' terms
  // last, so that with them at 0 the sum is section 5's to the bit), then
  // the table's part (section 5c) when there is a table.
  // Roofline: c0 + max(cw + ckv A + ce X, cp P + cq Q + cd D).
  double seconds(const StepWork& work) const;
  // d seconds / d coefficient: the units, with the roofline's smaller side's
  // zeroed (its coefficients do not move the step where they are).
  StepCoefficients gradient(const StepWork& work) const;
  // max(1, llround(seconds * 1e9)) ns.
  Duration duration(const StepWork& work) const;
};

// A prompt of `prompt` tokens prefilled alone on an idle replica, its first
// `cached` tokens found in the prefix cache, in steps of at most
// `max_batched_tokens` tokens as the scheduler chunks it: the sum of its
// steps' durations, in seconds.
double idle_prefill_seconds(const StepCost& cost, std::int64_t prompt,
                            std::int64_t max_batched_tokens, std::int64_t cached = 0);

// What a recorded step's batch held.
inline StepWork work_of(const StepRecord& s) {
  return {s.prefill_tokens, s.prefill_pairs, s.decode_requests,
          s.decode_context, s.expert_tokens, s.expert_share};
}

// The knobs' coefficients in the order above, and back.
StepCoefficients coefficients_of(const BatchingKnobs& knobs);
void set_coefficients(BatchingKnobs& knobs, const StepCoefficients& c);

}  // namespace infersim
