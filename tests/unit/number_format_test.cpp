#include "core/number_format.hpp"

#include <gtest/gtest.h>

namespace infersim {
namespace {

TEST(NumberFormat, SecondsHaveExactlyNineDecimals) {
  EXPECT_EQ(seconds9(0), "0.000000000");
  EXPECT_EQ(seconds9(1), "0.000000001");
  EXPECT_EQ(seconds9(3'500'000'000), "3.500000000");
  EXPECT_EQ(seconds9(-1), "-0.000000001");
  EXPECT_EQ(seconds9(-1'000'000'001), "-1.000000001");
  EXPECT_EQ(seconds9(std::numeric_limits<std::int64_t>::max()), "9223372036.854775807");
  EXPECT_EQ(seconds9(std::numeric_limits<std::int64_t>::min()), "-9223372036.854775808");
}

TEST(NumberFormat, DoublesUseTheShortestRoundTrip) {
  EXPECT_EQ(shortest(4808), "4808");
  EXPECT_EQ(shortest(0.1), "0.1");
  EXPECT_EQ(shortest(2047.8340000000001), "2047.834");
  EXPECT_EQ(shortest(1.0 / 3), "0.3333333333333333");
}

TEST(NumberFormat, FixedDecimalsForTheConsole) {
  EXPECT_EQ(fixed(42.41569, 2), "42.42");
  EXPECT_EQ(fixed(3, 4), "3.0000");
}

}  // namespace
}  // namespace infersim
