// The step cost (model/step_cost.hpp): section 5's sum to the bit with the
// extensions off, the roofline's larger side, the experts a step reads, and
// the gradient the calibration follows.
#include <gtest/gtest.h>

#include <cmath>

#include "model/step_cost.hpp"

namespace infersim {
namespace {

StepCost spec_cost() {
  StepCost c;
  c.coefficients = {0.0065, 1.98e-5, 1.2e-9, 2.0e-5, 4.0e-8, 0, 0};
  return c;
}

TEST(StepCost, WithTheExtensionsOffIsSectionFivesSumToTheBit) {
  const StepCost cost = spec_cost();
  const StepWork w{1200, 1200 * 1201 / 2, 37, 52'000, 1237, 1};
  // c0 + cp P + cq Q + cd D + ckv A, summed in that order.
  double expected = 0.0065;
  expected += 1.98e-5 * 1200.0;
  expected += 1.2e-9 * (1200.0 * 1201 / 2);
  expected += 2.0e-5 * 37.0;
  expected += 4.0e-8 * 52'000.0;
  EXPECT_EQ(cost.seconds(w), expected);
  EXPECT_EQ(cost.duration(w).count_ns(), std::llround(expected * 1e9));
}

TEST(StepCost, TheKnobsDefaultsAreSectionFivesDefaults) {
  const StepCost cost = StepCost::of(BatchingKnobs{});
  EXPECT_EQ(cost.coefficients, spec_cost().coefficients);
  EXPECT_FALSE(cost.roofline);
  EXPECT_EQ(cost.experts, 0);
}

TEST(StepCost, AStepLastsAtLeastOneNanosecond) {
  StepCost free;
  EXPECT_EQ(free.duration(StepWork{}).count_ns(), 1);
}

TEST(StepCost, TheRooflineTakesTheLargerSidePlusTheFixedPart) {
  StepCost c;
  c.roofline = true;
  c.coefficients = {0.001, 1e-4, 0, 1e-4, 1e-7, 0.010, 0};
  // Memory: 10 ms + 1e-7 x 20000 = 12 ms; compute: 1e-4 x 30 = 3 ms.
  const StepWork decode{0, 0, 30, 20'000, 30, 1};
  EXPECT_DOUBLE_EQ(c.seconds(decode), 0.001 + 0.012);
  // Compute: 1e-4 x (500 + 30) = 53 ms beats the 12 ms of memory.
  const StepWork mixed{500, 0, 30, 20'000, 530, 1};
  EXPECT_DOUBLE_EQ(c.seconds(mixed), 0.001 + 0.053);
  // The gradient follows the side that binds.
  const StepCoefficients g = c.gradient(mixed);
  EXPECT_EQ(g[kStepBase], 1);
  EXPECT_EQ(g[kStepPrefillToken], 500);
  EXPECT_EQ(g[kStepDecodeToken], 30);
  EXPECT_EQ(g[kStepWeights], 0);
  EXPECT_EQ(g[kStepDecodeContext], 0);
  const StepCoefficients h = c.gradient(decode);
  EXPECT_EQ(h[kStepWeights], 1);
  EXPECT_EQ(h[kStepDecodeContext], 20'000);
  EXPECT_EQ(h[kStepDecodeToken], 0);
  // In the sum form the same coefficients add up.
  c.roofline = false;
  EXPECT_DOUBLE_EQ(c.seconds(mixed), 0.001 + 0.053 + 0.012);
  EXPECT_EQ(c.gradient(mixed)[kStepWeights], 1);
}

TEST(StepCost, ExpertsReadGrowWithTheTokensAndSaturate) {
  StepCost c;
  c.experts = 128;
  c.active_experts = 8;
  c.coefficients[kStepExpert] = 1e-4;
  // One token touches its k experts; T tokens E (1 - (1 - k/E)^T).
  EXPECT_DOUBLE_EQ(c.units({0, 0, 1, 0, 1, 1})[kStepExpert], 8.0);
  const double sixteen = 128 * (1 - std::pow(1 - 8.0 / 128, 16));
  EXPECT_DOUBLE_EQ(c.units({0, 0, 16, 0, 16, 1})[kStepExpert], sixteen);
  EXPECT_GT(c.units({2048, 0, 0, 0, 2048, 1})[kStepExpert], 127.99);
  EXPECT_LE(c.units({2048, 0, 0, 0, 2048, 1})[kStepExpert], 128.0);
  // Shared among two replicas in lockstep, each reads half of what the
  // round's tokens touch.
  EXPECT_DOUBLE_EQ(c.units({0, 0, 16, 0, 16, 2})[kStepExpert], sixteen / 2);
  EXPECT_DOUBLE_EQ(c.seconds({0, 0, 16, 0, 16, 1}), 1e-4 * sixteen);
  // A dense model reads none.
  StepCost dense;
  dense.coefficients[kStepExpert] = 1e-4;
  EXPECT_EQ(dense.units({0, 0, 16, 0, 16, 1})[kStepExpert], 0);
}

// Section 5's Q of a chunk: its tokens attend to the request's earlier ones
// and to the chunk's own up to themselves.
TEST(StepCost, PrefillPairsOfAChunkCountItsEarlierTokens) {
  EXPECT_EQ(prefill_pairs(0, 1), 1u);
  EXPECT_EQ(prefill_pairs(0, 4), 10u);  // 1 + 2 + 3 + 4
  EXPECT_EQ(prefill_pairs(8, 2), 19u);  // 2 * 8 + 1 + 2
  EXPECT_EQ(prefill_pairs(0, 8192), 33558528u);
}

// A 10-token prompt alone in steps of at most 4 tokens: chunks of 4, 4 and
// 2 tokens with 10, 26 and 19 pairs, each step rounded to ns as the
// scheduler's: 1,014,000 + 1,030,000 + 1,021,000 ns.
TEST(StepCost, AnIdlePrefillIsItsChunksSteps) {
  StepCost c;
  c.coefficients = {0.001, 1e-6, 1e-6, 0, 0, 0, 0};
  EXPECT_DOUBLE_EQ(idle_prefill_seconds(c, 10, 4), 0.001014 + 0.001030 + 0.001021);
  EXPECT_DOUBLE_EQ(idle_prefill_seconds(c, 10, 8192), 0.001 + 10e-6 + 55e-6);
}

TEST(StepCost, KnobsAndCoefficientsGoBothWays) {
  BatchingKnobs k;
  const StepCoefficients c = {1, 2, 3, 4, 5, 6, 7};
  set_coefficients(k, c);
  EXPECT_EQ(coefficients_of(k), c);
  EXPECT_EQ(k.step_weights_s, 6);
  EXPECT_EQ(k.step_expert_s, 7);
}

}  // namespace
}  // namespace infersim
