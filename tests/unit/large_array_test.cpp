// Huge-page advice that leaves the contents alone.
#include "core/large_array.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace infersim {
namespace {

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
