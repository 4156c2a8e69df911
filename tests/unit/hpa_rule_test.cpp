#include "model/hpa_rule.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <typeinfo>

#include "model/scaling_rule.hpp"

namespace infersim {
namespace {

SimTime at_s(std::int64_t s) {
  return SimTime::ns(s * 1'000'000'000);
}

// min 1, max 4, every 15 s, 8 requests a replica, scale-down delay 300 s.
Autoscale hpa_knobs() {
  Autoscale a;
  a.min = 1;
  a.max = 4;
  a.interval = Duration::ns(15'000'000'000);
  a.target_requests = 8;
  a.scale_down_delay = Duration::ns(300'000'000'000);
  return a;
}

TEST(HpaRule, IsTheRuleOfAClassThatAutoscales) {
  const std::unique_ptr<ScalingRule> rule = make_scaling_rule(hpa_knobs());
  const ScalingRule& made = *rule;
  EXPECT_EQ(typeid(made), typeid(HpaRule));
  EXPECT_EQ(rule->interval().count_ns(), 15'000'000'000);
}

// At 15 s, 20 requests on one replica want ceil(20 / 8) = 3: up to 3. At 30
// s and 300 s nothing is loaded (desired 1), but 3 stays the largest desired
// of (t - 300 s, t]: they keep 3. At 315 s the evaluation of 15 s has left
// the window: down to 1.
TEST(HpaRule, ScalesUpAtOnceAndDownToTheLargestDesiredOfTheWindow) {
  HpaRule rule(hpa_knobs());
  EXPECT_EQ(rule.desired({at_s(15), 20, 1}), 3);
  EXPECT_EQ(rule.desired({at_s(30), 0, 3}), 3);
  EXPECT_EQ(rule.desired({at_s(300), 0, 3}), 3);
  EXPECT_EQ(rule.desired({at_s(315), 0, 3}), 1);
  // Going up never waits for the window: 9 requests want 2 > 1.
  EXPECT_EQ(rule.desired({at_s(330), 9, 1}), 2);
  // Nor is a class below the window's largest raised to it: desired 1, the
  // window's largest 2, and the class of 1 keeps its 1.
  EXPECT_EQ(rule.desired({at_s(345), 0, 1}), 1);
}

TEST(HpaRule, ClampsToMinAndMaxInDoubleBeforeMakingItWhole) {
  Autoscale a = hpa_knobs();
  a.scale_down_delay = Duration::zero();  // the window holds this evaluation alone
  HpaRule rule(a);
  EXPECT_EQ(rule.desired({at_s(15), 1000, 1}), 4);  // ceil(125), above max
  EXPECT_EQ(rule.desired({at_s(30), 0, 4}), 1);     // 0, below min
  EXPECT_EQ(rule.desired({at_s(45), 17, 1}), 3);    // ceil(2.125)
  a.target_requests = 1e-320;                       // load / target is infinite: max (§13.3)
  HpaRule tiny(a);
  EXPECT_EQ(tiny.desired({at_s(15), 1, 1}), 4);
}

}  // namespace
}  // namespace infersim
