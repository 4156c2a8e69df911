#include "task/task.hpp"

#include <gtest/gtest.h>

namespace infersim {
namespace {

TEST(Task, DerivesLengthTimesSizesAndBudgetFromTokens) {
  const Task task = make_task(SimTime::ns(7), 1000, 10, TaskKnobs{});
  EXPECT_EQ(task.arrival, SimTime::ns(7));
  EXPECT_DOUBLE_EQ(task.length_mi, 1000 * 12 + 10 * 2000);
  EXPECT_EQ(task.exec.count_ns(), 533'333'333);         // 32000 / 60000 s
  EXPECT_EQ(task.first_token.count_ns(), 233'333'333);  // (12000 + 2000) / 60000 s
  EXPECT_DOUBLE_EQ(task.request_bits, 32000);
  EXPECT_DOUBLE_EQ(task.result_bits, 320);
  EXPECT_EQ(task.budget.count_ns(), 3'000'000'000);  // 2 s + 10 * 0.1 s
}

TEST(Task, WithoutGeneratedTokensTheFirstTokenIsTheWholeExecution) {
  const Task task = make_task(SimTime::zero(), 500, 0, TaskKnobs{});
  EXPECT_EQ(task.exec.count_ns(), 100'000'000);
  EXPECT_EQ(task.first_token, task.exec);
  EXPECT_EQ(task.budget.count_ns(), 2'000'000'000);
}

TEST(Task, KnobsChangeTheCosts) {
  TaskKnobs knobs;
  knobs.mi_per_generated_token = 1000;
  knobs.mips_per_core = 30000;
  knobs.bytes_per_token = 2;
  knobs.decode_budget_s = 0.5;
  const Task task = make_task(SimTime::zero(), 100, 3, knobs);
  EXPECT_EQ(task.exec.count_ns(), 140'000'000);  // (1200 + 3000) / 30000 s
  EXPECT_DOUBLE_EQ(task.request_bits, 1600);
  EXPECT_EQ(task.budget.count_ns(), 3'500'000'000);
}

TEST(Task, MeanSizesMayBeReal) {
  const Task task = make_task(SimTime::zero(), 2.5, 0.5, TaskKnobs{});
  EXPECT_DOUBLE_EQ(task.length_mi, 2.5 * 12 + 0.5 * 2000);
  EXPECT_EQ(task.first_token, task.exec);  // fewer than one generated token
}

}  // namespace
}  // namespace infersim
