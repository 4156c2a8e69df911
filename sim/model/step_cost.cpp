#include "model/step_cost.hpp"

#include <algorithm>
#include <cmath>

namespace infersim {

StepCost StepCost::of(const BatchingKnobs& knobs) {
  StepCost cost;
  cost.coefficients = coefficients_of(knobs);
  cost.roofline = knobs.step_roofline;
  cost.experts = knobs.moe_experts;
  cost.active_experts = knobs.moe_active_experts;
  cost.table = knobs.step_table;
  return cost;
}

double StepCost::experts_read(const StepWork& w) const {
  if (experts <= 0 || w.expert_tokens == 0) return 0;
  const double e = static_cast<double>(experts);
  const double untouched =
      std::pow(1 - static_cast<double>(active_experts) / e, static_cast<double>(w.expert_tokens));
  return e * (1 - untouched) / static_cast<double>(std::max<std::uint32_t>(1, w.expert_share));
}

StepCoefficients StepCost::units(const StepWork& w) const {
  return {1.0,
          static_cast<double>(w.prefill_tokens),
          static_cast<double>(w.prefill_pairs),
          static_cast<double>(w.decode_requests),
          static_cast<double>(w.decode_context),
          1.0,
          experts_read(w)};
}

namespace {

struct Sides {
  double memory = 0;
  double compute = 0;
};

Sides sides_of(const StepCoefficients& c, const StepCoefficients& u) {
  Sides s;
  s.memory = c[kStepWeights] * u[kStepWeights];
  s.memory += c[kStepDecodeContext] * u[kStepDecodeContext];
  s.memory += c[kStepExpert] * u[kStepExpert];
  s.compute = c[kStepPrefillToken] * u[kStepPrefillToken];
  s.compute += c[kStepPrefillPair] * u[kStepPrefillPair];
  s.compute += c[kStepDecodeToken] * u[kStepDecodeToken];
  return s;
}

}  // namespace

double StepCost::seconds(const StepWork& work) const {
  const StepCoefficients& c = coefficients;
  if (roofline) {
    const Sides s = sides_of(c, units(work));
    return c[kStepBase] + std::max(s.memory, s.compute);
  }
  // The units' sum in their order, written out: every step of a run comes
  // here, and an array of units built and read back cost twice the
  // instructions. A count is far below 2^63: as a signed number it converts
  // to the same double in one instruction, where an unsigned one takes a test
  // of its top bit.
  const auto count = [](std::uint64_t n) {
    return static_cast<double>(static_cast<std::int64_t>(n));
  };
  double step_s = c[kStepBase];
  step_s += c[kStepPrefillToken] * count(work.prefill_tokens);
  step_s += c[kStepPrefillPair] * count(work.prefill_pairs);
  step_s += c[kStepDecodeToken] * count(work.decode_requests);
  step_s += c[kStepDecodeContext] * count(work.decode_context);
  step_s += c[kStepWeights];
  step_s += c[kStepExpert] * experts_read(work);
  if (!table.empty()) {
    step_s += table.seconds(count(work.prefill_tokens) + count(work.decode_requests),
                            count(work.expert_tokens), count(work.prefill_pairs),
                            count(work.decode_requests), count(work.decode_context));
  }
  return step_s;
}

StepCoefficients StepCost::gradient(const StepWork& work) const {
  StepCoefficients u = units(work);
  if (!roofline) return u;
  const Sides s = sides_of(coefficients, u);
  // At a tie either side moves the step: the memory side is taken.
  const bool memory_bound = s.memory >= s.compute;
  for (const StepTerm t : {kStepWeights, kStepDecodeContext, kStepExpert}) {
    if (!memory_bound) u[t] = 0;
  }
  for (const StepTerm t : {kStepPrefillToken, kStepPrefillPair, kStepDecodeToken}) {
    if (memory_bound) u[t] = 0;
  }
  return u;
}

Duration StepCost::duration(const StepWork& work) const {
  return Duration::ns(std::max<std::int64_t>(1, seconds_to_ns(seconds(work))));
}

StepCoefficients coefficients_of(const BatchingKnobs& k) {
  return {k.step_base_s,         k.step_prefill_token_s,  k.step_prefill_pair_s,
          k.step_decode_token_s, k.step_decode_context_s, k.step_weights_s,
          k.step_expert_s};
}

void set_coefficients(BatchingKnobs& k, const StepCoefficients& c) {
  k.step_base_s = c[kStepBase];
  k.step_prefill_token_s = c[kStepPrefillToken];
  k.step_prefill_pair_s = c[kStepPrefillPair];
  k.step_decode_token_s = c[kStepDecodeToken];
  k.step_decode_context_s = c[kStepDecodeContext];
  k.step_weights_s = c[kStepWeights];
  k.step_expert_s = c[kStepExpert];
}

double idle_prefill_seconds(const StepCost& cost, std::int64_t prompt,
                            std::int64_t max_batched_tokens, std::int64_t cached) {
  std::int64_t remaining = prompt - cached, computed = cached;
  double seconds = 0;
  while (remaining > 0) {
    const std::int64_t n = std::min(remaining, max_batched_tokens);
    StepWork w;
    w.prefill_tokens = static_cast<std::uint64_t>(n);
    w.prefill_pairs = prefill_pairs(computed, n);
    w.expert_tokens = static_cast<std::uint64_t>(n);
    seconds += cost.duration(w).seconds();
    computed += n;
    remaining -= n;
  }
  return seconds;
}

}  // namespace infersim
