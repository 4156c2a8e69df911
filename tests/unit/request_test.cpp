#include "request/request.hpp"
#include "request/request_list.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace infersim {
namespace {

TEST(Request, DerivesLengthTimesSizesAndBudgetFromTokens) {
  const Request task = make_request(SimTime::ns(7), 1000, 10, RequestKnobs{});
  EXPECT_EQ(task.arrival, SimTime::ns(7));
  EXPECT_DOUBLE_EQ(task.length_mi, 1000 * 12 + 10 * 2000);
  EXPECT_EQ(task.exec.count_ns(), 533'333'333);         // 32000 / 60000 s
  EXPECT_EQ(task.first_token.count_ns(), 233'333'333);  // (12000 + 2000) / 60000 s
  EXPECT_DOUBLE_EQ(task.request_bits, 32000);
  EXPECT_DOUBLE_EQ(task.result_bits, 320);
  EXPECT_EQ(task.budget.count_ns(), 3'000'000'000);  // 2 s + 10 * 0.1 s
}

TEST(Request, WithoutGeneratedTokensTheFirstTokenIsTheWholeExecution) {
  const Request task = make_request(SimTime::zero(), 500, 0, RequestKnobs{});
  EXPECT_EQ(task.exec.count_ns(), 100'000'000);
  EXPECT_EQ(task.first_token, task.exec);
  EXPECT_EQ(task.budget.count_ns(), 2'000'000'000);
}

TEST(Request, KnobsChangeTheCosts) {
  RequestKnobs knobs;
  knobs.mi_per_generated_token = 1000;
  knobs.mips_per_core = 30000;
  knobs.bytes_per_token = 2;
  knobs.decode_budget_s = 0.5;
  const Request task = make_request(SimTime::zero(), 100, 3, knobs);
  EXPECT_EQ(task.exec.count_ns(), 140'000'000);  // (1200 + 3000) / 30000 s
  EXPECT_DOUBLE_EQ(task.request_bits, 1600);
  EXPECT_EQ(task.budget.count_ns(), 3'500'000'000);
}

TEST(Request, MeanSizesMayBeReal) {
  const Request task = make_request(SimTime::zero(), 2.5, 0.5, RequestKnobs{});
  EXPECT_DOUBLE_EQ(task.length_mi, 2.5 * 12 + 0.5 * 2000);
  EXPECT_EQ(task.first_token, task.exec);  // fewer than one generated token
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

// What a list gives back is what it was given, whichever way it keeps the
// sizes: the same for all, whole counts, or reals after whole ones.
TEST(RequestList, GivesBackTheSizesItWasGivenHoweverItKeepsThem) {
  const std::vector<std::pair<double, double>> same = {{2047.848, 27.883}, {2047.848, 27.883}};
  const std::vector<std::pair<double, double>> whole = {{5, 5}, {5, 5}, {7, 0}, {4294967295.0, 1}};
  const std::vector<std::pair<double, double>> mixed = {
      {5, 5}, {5, 5}, {6, 1}, {0.5, 2}, {4294967296.0, 3}, {1, 1}};
  for (const auto* sizes : {&same, &whole, &mixed}) {
    RequestList tasks;
    tasks.reserve(3);
    for (std::size_t k = 0; k < sizes->size(); ++k)
      tasks.add(SimTime::ns(static_cast<std::int64_t>(10 * k)), (*sizes)[k].first,
                (*sizes)[k].second);
    ASSERT_EQ(tasks.size(), sizes->size());
    for (std::size_t k = 0; k < sizes->size(); ++k) {
      EXPECT_EQ(tasks.arrival(k), SimTime::ns(static_cast<std::int64_t>(10 * k)));
      EXPECT_EQ(tasks.context_tokens(k), (*sizes)[k].first) << k;
      EXPECT_EQ(tasks.generated_tokens(k), (*sizes)[k].second) << k;
      EXPECT_EQ(
          tasks[k].length_mi,
          make_request(tasks.arrival(k), (*sizes)[k].first, (*sizes)[k].second, {}).length_mi);
    }
    tasks.pop_back();
    EXPECT_EQ(tasks.size(), sizes->size() - 1);
    EXPECT_EQ(tasks.generated_tokens(tasks.size() - 1), (*sizes)[sizes->size() - 2].second);
    tasks.clear();
    EXPECT_TRUE(tasks.empty());
    tasks.add(SimTime::zero(), 3, 4);
    EXPECT_EQ(tasks.context_tokens(0), 3);
  }
}

}  // namespace
}  // namespace infersim
