// The radix sort against std::sort (signed keys, shared digits, duplicates,
// small and large arrays), and huge-page advice that leaves the contents alone.
#include "core/large_array.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace infersim {
namespace {

std::vector<std::int64_t> sorted_copy(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(RadixSort, SortsLikeStdSort) {
  std::mt19937_64 bits(11);
  for (const std::size_t n : {0u, 1u, 2u, 255u, 256u, 1000u, 100000u}) {
    // Nanosecond times (shared high digits), full-range signed values, few distinct.
    std::vector<std::int64_t> times(n), any(n), few(n);
    for (std::size_t i = 0; i < n; ++i) {
      times[i] = static_cast<std::int64_t>(bits() % 400'000'000'000'000);
      any[i] = static_cast<std::int64_t>(bits());
      few[i] = static_cast<std::int64_t>(bits() % 3) - 1;
    }
    for (std::vector<std::int64_t>* v : {&times, &any, &few}) {
      const std::vector<std::int64_t> expected = sorted_copy(*v);
      radix_sort(*v);
      EXPECT_EQ(*v, expected) << n;
    }
  }
}

TEST(RadixSort, HandlesTheExtremes) {
  std::vector<std::int64_t> v;
  for (int i = 0; i < 300; ++i) {
    v.push_back(std::numeric_limits<std::int64_t>::max() - i);
    v.push_back(std::numeric_limits<std::int64_t>::min() + i);
    v.push_back(0);
  }
  const std::vector<std::int64_t> expected = sorted_copy(v);
  std::vector<std::int64_t> scratch;
  radix_sort(v, scratch);
  EXPECT_EQ(v, expected);
}

TEST(PreferHugePages, KeepsTheContents) {
  std::vector<std::int64_t> v;
  reserve_large(v, 1 << 20);  // 8 MiB: advised
  for (std::int64_t i = 0; i < (1 << 20); ++i)
    v.push_back(i * 3);
  prefer_huge_pages(v.data(), 1);  // too small: ignored
  prefer_huge_pages(nullptr, 1 << 30);
  EXPECT_EQ(v[12345], 12345 * 3);
  EXPECT_EQ(v.back(), ((1 << 20) - 1) * 3);
}

}  // namespace
}  // namespace infersim
