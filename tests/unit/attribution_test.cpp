// The recorded/synthetic gap split into timing and size mix
// (report/attribution.hpp), worked out by hand.
#include "report/attribution.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace infersim {
namespace {

using ::testing::HasSubstr;

ModeResult mode(const std::string& name, double ttft_p99, double wait_p99) {
  ModeResult r;
  r.mode = name;
  r.summary.add("ttft_p99_s", ttft_p99);
  r.summary.add("wait_p99_s", wait_p99);
  return r;
}

// TTFT p99: recorded 8 s, retimed 2 s, synthetic 0.5 s. The gap, x16, is
// timing x4 (8 / 2) times size mix x4 (2 / 0.5): ln 4 / ln 16, half each.
// Wait p99: 10 s, 9 s, 0 s: a size mix from nothing, timing x1.11.
TEST(Attribution, SplitsTheGapIntoTimingAndSizeMix) {
  const ModeResult rec = mode("recorded", 8, 10), ret = mode("retimed", 2, 9),
                   syn = mode("synthetic", 0.5, 0);
  const std::vector<AttributedFigure> f = attribute(rec, ret, syn);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].key, "wait_p99_s");
  EXPECT_TRUE(std::isinf(*f[0].ratio));
  EXPECT_DOUBLE_EQ(*f[0].timing, 10.0 / 9);
  EXPECT_TRUE(std::isinf(*f[0].size_mix));
  EXPECT_FALSE(f[0].timing_share);
  EXPECT_EQ(f[0].larger, "size mix");
  EXPECT_EQ(f[1].key, "ttft_p99_s");
  EXPECT_DOUBLE_EQ(*f[1].ratio, 16);
  EXPECT_DOUBLE_EQ(*f[1].timing, 4);
  EXPECT_DOUBLE_EQ(*f[1].size_mix, 4);
  EXPECT_DOUBLE_EQ(*f[1].timing_share, 0.5);
  // Timing x8 of a x16 gap: three quarters of it on a log scale, timing larger.
  const std::vector<AttributedFigure> g =
      attribute(mode("recorded", 8, 1), mode("retimed", 1, 1), mode("synthetic", 0.5, 1));
  EXPECT_DOUBLE_EQ(*g[1].timing_share, 0.75);
  EXPECT_EQ(g[1].larger, "timing");
  EXPECT_EQ(g[0].larger, "neither");  // every wait the same
  // summary.json: an infinite factor is null.
  const nlohmann::ordered_json j = attribution_json(f);
  EXPECT_TRUE(j["wait_p99_s"]["ratio"].is_null());
  EXPECT_DOUBLE_EQ(j["ttft_p99_s"]["timing_share"].get<double>(), 0.5);
  EXPECT_EQ(j["ttft_p99_s"]["larger"], "timing");  // at a tie, timing is named
  EXPECT_THAT(attribution_sentence(f),
              HasSubstr("The recorded TTFT p99 is x16.0 the synthetic one's: x4.00 from the "
                        "timing"));
}

}  // namespace
}  // namespace infersim
