#include "request/request.hpp"
#include "request/request_list.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace infersim {
namespace {

TEST(Request, DerivesSizesAndBudgetFromTokens) {
  const Request request = make_request(SimTime::ns(7), 1000, 10, RequestKnobs{});
  EXPECT_EQ(request.arrival, SimTime::ns(7));
  EXPECT_DOUBLE_EQ(request.request_bits, 32000);  // 1000 tokens of 4 bytes
  EXPECT_DOUBLE_EQ(request.result_bits, 320);
  EXPECT_EQ(request.budget.count_ns(), 3'000'000'000);  // 2 s + 10 * 0.1 s
  EXPECT_TRUE(request.block_ids.empty());
}

TEST(Request, KnobsChangeTheSizesAndTheBudget) {
  RequestKnobs knobs;
  knobs.bytes_per_token = 2;
  knobs.decode_budget_s = 0.5;
  const Request request = make_request(SimTime::zero(), 100, 3, knobs);
  EXPECT_DOUBLE_EQ(request.request_bits, 1600);
  EXPECT_DOUBLE_EQ(request.result_bits, 48);
  EXPECT_EQ(request.budget.count_ns(), 3'500'000'000);
  // Without generated tokens the budget is the TTFT budget alone.
  EXPECT_EQ(make_request(SimTime::zero(), 500, 0, RequestKnobs{}).budget.count_ns(), 2'000'000'000);
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
          tasks[k].request_bits,
          make_request(tasks.arrival(k), (*sizes)[k].first, (*sizes)[k].second, {}).request_bits);
    }
    tasks.clear();
    EXPECT_TRUE(tasks.empty());
    tasks.add(SimTime::zero(), 3, 4);
    EXPECT_EQ(tasks.context_tokens(0), 3);
  }
}

}  // namespace
}  // namespace infersim
