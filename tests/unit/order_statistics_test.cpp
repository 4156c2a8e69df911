// Order statistics by selection against a full sort: signed and real keys,
// repeats, extremes, distributions concentrated in one bucket (the recursive
// case), every rank of small arrays.
#include "core/order_statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace infersim {
namespace {

// Every rank of `v` when it is small, else a spread of ranks and the ends.
std::vector<std::size_t> ranks_for(std::size_t n, std::mt19937_64& bits) {
  std::vector<std::size_t> ranks;
  if (n <= 300) {
    for (std::size_t r = 0; r < n; ++r)
      ranks.push_back(n - 1 - r);
    return ranks;
  }
  for (int i = 0; i < 200; ++i)
    ranks.push_back(bits() % n);
  ranks.push_back(0);
  ranks.push_back(n - 1);
  ranks.push_back(n / 2);
  ranks.push_back(n / 2);  // repeated
  return ranks;
}

void expect_selected_like_sorted(const std::vector<std::int64_t>& v, std::mt19937_64& bits) {
  std::vector<std::int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<std::size_t> ranks = ranks_for(v.size(), bits);
  const std::vector<std::uint64_t> keys = select_ranks(
      v.size(), [&](std::size_t i) { return order_key(v[i]); }, std::span(ranks));
  ASSERT_EQ(keys.size(), ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i)
    ASSERT_EQ(int64_of_order_key(keys[i]), sorted[ranks[i]])
        << "n " << v.size() << " rank " << ranks[i];
}

TEST(SelectRanks, FindsWhatASortPutsAtEachRank) {
  std::mt19937_64 bits(7);
  for (const std::size_t n : {1u, 2u, 3u, 300u, 2048u, 2049u, 5000u, 200000u}) {
    std::vector<std::int64_t> times(n), any(n), few(n), skewed(n);
    for (std::size_t i = 0; i < n; ++i) {
      times[i] = static_cast<std::int64_t>(bits() % 400'000'000'000'000);
      any[i] = static_cast<std::int64_t>(bits());
      few[i] = static_cast<std::int64_t>(bits() % 3) - 1;
      // Mostly zero (waits of a lightly loaded server), a long tail.
      skewed[i] = bits() % 100 < 97 ? 0 : static_cast<std::int64_t>(bits() % 60'000'000'000);
    }
    for (const auto* v : {&times, &any, &few, &skewed})
      expect_selected_like_sorted(*v, bits);
  }
}

TEST(SelectRanks, ABucketHoldingNearlyEverythingIsSplitAgain) {
  std::mt19937_64 bits(3);
  // One outlier stretches the range, so the first buckets are 2^40 wide and
  // every other value falls into one: found by a second and third bucketing.
  std::vector<std::int64_t> v(100000);
  for (auto& x : v)
    x = static_cast<std::int64_t>(bits() % 1'000'000);
  v[17] = std::int64_t{1} << 56;
  expect_selected_like_sorted(v, bits);
}

TEST(SelectRanks, BucketsFollowTheCountUpToTwoToTheSixteen) {
  using order_statistics_detail::bucket_bits;
  EXPECT_EQ(bucket_bits(2049), 9u);
  EXPECT_EQ(bucket_bits(100'000), 14u);
  EXPECT_EQ(bucket_bits(std::size_t{1} << 19), 16u);
  EXPECT_EQ(bucket_bits(10'000'000), 16u);
  // Around the sizes where the bucket count changes, selection stays exact.
  std::mt19937_64 bits(9);
  for (const std::size_t n : {std::size_t{4095}, std::size_t{4096}, std::size_t{65536}}) {
    std::vector<std::int64_t> v(n);
    for (auto& x : v)
      x = static_cast<std::int64_t>(bits() % 100'000'000);
    expect_selected_like_sorted(v, bits);
  }
}

TEST(SelectRanks, HandlesTheExtremes) {
  std::mt19937_64 bits(5);
  std::vector<std::int64_t> v;
  for (int i = 0; i < 3000; ++i) {
    v.push_back(std::numeric_limits<std::int64_t>::max() - i % 5);
    v.push_back(std::numeric_limits<std::int64_t>::min() + i % 7);
    v.push_back(0);
  }
  expect_selected_like_sorted(v, bits);
  const std::vector<std::int64_t> same(10000, -42);
  expect_selected_like_sorted(same, bits);
}

TEST(SelectRanks, RealKeysKeepTheirOrder) {
  std::mt19937_64 bits(9);
  std::vector<double> v(50000);
  for (auto& x : v)
    x = std::ldexp(static_cast<double>(bits() % 1000000) - 500000.0,
                   static_cast<int>(bits() % 80) - 40);
  v[0] = -std::numeric_limits<double>::infinity();
  v[1] = std::numeric_limits<double>::infinity();
  v[2] = std::numeric_limits<double>::denorm_min();
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<std::size_t> ranks = ranks_for(v.size(), bits);
  const std::vector<std::uint64_t> keys = select_ranks(
      v.size(), [&](std::size_t i) { return order_key(v[i]); }, std::span(ranks));
  for (std::size_t i = 0; i < ranks.size(); ++i)
    EXPECT_EQ(double_of_order_key(keys[i]), sorted[ranks[i]]) << ranks[i];
  for (const double x : {-1.5, -0.0, 0.0, 2.25, 1e300})
    EXPECT_EQ(double_of_order_key(order_key(x)), x);
  EXPECT_LT(order_key(-0.0), order_key(0.0));
  EXPECT_LT(order_key(-2.0), order_key(-1.0));
}

}  // namespace
}  // namespace infersim
