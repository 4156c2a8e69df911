// The multiply-and-correct division against the plain one: divisors from 1 ns
// to an hour and beyond, dividends up to the end of the int64 clock.
#include "core/fixed_divisor.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace infersim {
namespace {

TEST(FixedDivisor, EqualsIntegerDivision) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::mt19937_64 bits(5);
  for (const std::int64_t s :
       {std::int64_t{1}, std::int64_t{3}, std::int64_t{7'000'000'001}, std::int64_t{60'000'000'000},
        std::int64_t{3'600'000'000'000}, std::int64_t{1} << 40, kMax / 3, kMax}) {
    const FixedDivisor divide(s);
    std::vector<std::int64_t> ts = {0, 1, s - 1, s, 2 * (s / 2), kMax, kMax - 1};
    if (s < kMax) ts.push_back(s + 1);
    for (int i = 0; i < 20000; ++i) {
      const auto t = static_cast<std::int64_t>(bits() >> (1 + bits() % 63));
      ts.push_back(t);
      if (t / s < kMax / s - 1) ts.push_back((t / s + 1) * s);  // a multiple of s
    }
    for (const std::int64_t t : ts) {
      if (t < 0) continue;
      ASSERT_EQ(divide(t), t / s) << t << " / " << s;
    }
    EXPECT_EQ(divide(-5), 0);
  }
}

}  // namespace
}  // namespace infersim
