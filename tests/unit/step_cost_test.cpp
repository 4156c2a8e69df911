// The step cost (model/step_cost.hpp): section 5's sum to the bit with the
// extensions off, the roofline's larger side, the experts a step reads, and
// the gradient the calibration follows; section 5c's tables.
#include <gtest/gtest.h>

#include <cmath>

#include "core/input_error.hpp"
#include "model/batching_knobs.hpp"
#include "model/step_cost.hpp"
#include "model/step_table.hpp"

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

// Section 5c: a small table whose every value can be worked by hand.
StepTable hand_table() {
  StepTable t;
  t.tokens = {{1, 4, 8}, {1e-3, 2e-3, 4e-3}};
  t.prefill_pairs = {{100, 1000}, {1e-4, 1e-3}};
  t.decode.batch = {1, 2};
  t.decode.context = {10, 20};
  t.decode.s = {1e-4, 2e-4,   // batch 1
                3e-4, 6e-4};  // batch 2
  return t;
}

TEST(StepTable, CurvesAreFlatBelowLinearBetweenAndProportionalPast) {
  const StepCurve c = hand_table().tokens;
  EXPECT_EQ(c.value(0), 0);
  EXPECT_EQ(c.value(-3), 0);
  EXPECT_EQ(c.value(0.5), 1e-3);
  EXPECT_EQ(c.value(1), 1e-3);
  EXPECT_DOUBLE_EQ(c.value(2.5), 1.5e-3);
  EXPECT_DOUBLE_EQ(c.value(6), 3e-3);
  EXPECT_EQ(c.value(8), 4e-3);
  EXPECT_DOUBLE_EQ(c.value(12), 6e-3);
}

TEST(StepTable, TheDecodeGridIsLinearInContextThenInBatch) {
  const StepGrid g = hand_table().decode;
  EXPECT_EQ(g.value(0, 15), 0);
  EXPECT_DOUBLE_EQ(g.value(1, 15), 1.5e-4);
  EXPECT_DOUBLE_EQ(g.value(2, 15), 4.5e-4);
  EXPECT_DOUBLE_EQ(g.value(1.5, 15), 3e-4);
  // Past the last context, then past the last batch: in proportion.
  EXPECT_DOUBLE_EQ(g.value(1, 40), 4e-4);
  EXPECT_DOUBLE_EQ(g.value(4, 20), 1.2e-3);
  EXPECT_DOUBLE_EQ(g.value(0.5, 5), 1e-4);
}

TEST(StepTable, AStepIsSectionFivesSumWithTheTablesPartAddedLast) {
  StepCost cost = spec_cost();
  cost.table = hand_table();
  const StepWork w{2, 100, 2, 30, 4, 1};
  // P + D = 4 tokens; Q = 100; 2 decodes at 15 of context each.
  double expected = spec_cost().seconds(w);
  expected += 2e-3;
  expected += 1e-4;
  expected += 4.5e-4;
  EXPECT_EQ(cost.seconds(w), expected);
  // A step of no decodes reads no grid; the gradient is section 5's units.
  const StepWork prefill{8, 36, 0, 0, 8, 1};
  EXPECT_DOUBLE_EQ(cost.seconds(prefill) - spec_cost().seconds(prefill), 4e-3 + 1e-4);
  EXPECT_EQ(cost.gradient(w), spec_cost().gradient(w));
}

TEST(StepTable, ReadsWhatItWritesAndRefusesAMalformedTableNamingTheField) {
  const StepTable t = hand_table();
  const StepTable back = StepTable::from_json(nlohmann::json::parse(t.to_json().dump()), "p.json",
                                              "batching.step_table");
  EXPECT_EQ(back.tokens.at, t.tokens.at);
  EXPECT_EQ(back.decode.s, t.decode.s);
  EXPECT_TRUE(back.expert_tokens.empty());
  const auto refused = [](const std::string& text) {
    try {
      StepTable::from_json(nlohmann::json::parse(text), "p.json", "batching.step_table");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string decode = R"("decode": {"batch": [1], "context": [10], "s": [[1e-4]]})";
  const std::string pairs = R"("prefill_pairs": {"at": [1], "s": [0]})";
  EXPECT_EQ(refused(R"({"tokens": {"at": [1, 1], "s": [0, 0]}, )" + pairs + ", " + decode + "}"),
            "p.json: batching.step_table.tokens.at[1]: sizes must increase, got 1 after 1");
  EXPECT_EQ(refused(R"({"tokens": {"at": [1], "s": [-1]}, )" + pairs + ", " + decode + "}"),
            "p.json: batching.step_table.tokens.s[0]: must be at least 0.0, got -1");
  EXPECT_EQ(refused(R"({"tokens": {"at": [1, 2], "s": [0]}, )" + pairs + ", " + decode + "}"),
            "p.json: batching.step_table.tokens.s: expected a list of 2 seconds, got [0]");
  EXPECT_EQ(refused(R"({"tokens": {"at": [1], "s": [0]}, )" + pairs +
                    R"(, "decode": {"batch": [1, 2], "context": [10], "s": [[1e-4]]}})"),
            "p.json: batching.step_table.decode.s: expected 2 rows, one a batch size, got "
            "[[0.0001]]");
  EXPECT_EQ(refused(R"({"tokens": {"at": [1], "s": [0]}, )" + decode + "}"),
            "p.json: batching.step_table.prefill_pairs: missing");
  EXPECT_EQ(refused(R"({"token": {"at": [1], "s": [0]}})"),
            "p.json: batching.step_table.token: unknown key; a step table holds tokens, "
            "expert_tokens, prefill_pairs and decode");
}

TEST(StepTable, TheKnobReadsNullAsNoneAndIsRefusedBesideTheRoofline) {
  const Knob<BatchingKnobs>* row = find_batching_knob("step_table");
  ASSERT_NE(row, nullptr);
  BatchingKnobs k;
  row->set(k, nlohmann::json::parse(hand_table().to_json().dump()), "s.json",
           "batching.step_table");
  EXPECT_FALSE(k.step_table.empty());
  EXPECT_NO_THROW(check_batching_knobs(k, 0, "s.json"));
  k.step_roofline = true;
  try {
    check_batching_knobs(k, 0, "s.json");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "s.json: batching.step_table, batching.step_roofline: a step table adds to "
                 "section 5's sum; the roofline has no place for it");
  }
  row->set(k, nullptr, "s.json", "batching.step_table");
  EXPECT_TRUE(k.step_table.empty());
  EXPECT_TRUE(row->get(k).is_null());
}

}  // namespace
}  // namespace infersim
