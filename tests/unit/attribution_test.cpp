// The recorded/synthetic gap split into timing and size mix
// (report/attribution.hpp), worked out by hand.
#include "report/attribution.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "report/report_html.hpp"

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

// The console's "Larger" cell of a figure: its row's text under the header's
// "Larger".
std::string larger_cell(double recorded, double retimed, double synthetic) {
  const ModeResult rec = mode("recorded", recorded, 1), ret = mode("retimed", retimed, 1),
                   syn = mode("synthetic", synthetic, 1);
  const std::string table = attribution_table(attribute(rec, ret, syn), rec, ret, syn);
  const std::size_t header = table.find("Figure ");
  const std::size_t column = table.find("Larger", header) - header;
  const std::size_t row = table.find("Time to first token (TTFT), p99");
  const std::size_t end = table.find('\n', row);
  if (header == std::string::npos || row == std::string::npos) return "";
  return table.substr(row + column, end - row - column);
}

// The "Larger" words, each true of its two factors. The Mooncake hour's TTFT
// p99 on eight H100 replicas (README.md's tour): 4.124 s recorded, 4.304 s
// retimed, 603.1 ms synthetic: timing x0.96 pulls against a size mix of x7.14,
// where ln(0.96) / ln(6.84) printed "-2 % timing".
TEST(AttributionWords, FactorsPullingApartAreSaidToNotShared) {
  EXPECT_EQ(larger_cell(4.124, 4.304, 0.6031), "size mix (timing the other way, x0.96)");
  // Timing x0.5 against a size mix of x4: the gap, x2, is less than the size
  // mix; the share (ln 0.5 / ln 2 = -100 %) is not printed.
  EXPECT_EQ(larger_cell(1, 2, 0.5), "size mix (timing the other way, x0.50)");
  const auto g =
      attribute(mode("recorded", 1, 1), mode("retimed", 2, 1), mode("synthetic", 0.5, 1));
  EXPECT_THAT(attribution_sentence(g), HasSubstr("the timing pulls the other way"));
}

// A size mix of x1.07 and a timing of x1.02: neither beyond 10 %, which is
// all the words say (the share, 23 % of the gap, was printed beside it).
TEST(AttributionWords, NeitherCarriesNoShare) {
  EXPECT_EQ(larger_cell(1.02 * 1.07, 1.07, 1), "neither");
}

// Both the same way: timing's share of the gap, from 0 to 100 %; a timing of
// x0.999 beside a size mix of x7 is 0 % timing, never "-0 %".
TEST(AttributionWords, TheSameWayGivesTheShare) {
  EXPECT_EQ(larger_cell(8, 2, 0.5), "timing (50 % timing)");
  EXPECT_EQ(larger_cell(6.993, 7, 1), "size mix (0 % timing)");
  // Over a grid of factors, a share is printed only between 0 and 100 %.
  for (double t : {0.3, 0.9, 0.96, 0.999, 1.0, 1.001, 1.04, 1.2, 5.0}) {
    for (double m : {0.2, 0.8, 0.97, 1.0, 1.03, 1.5, 7.0}) {
      const std::string words = larger_cell(t * m, m, 1);
      EXPECT_THAT(words, ::testing::Not(HasSubstr("-"))) << t << " " << m;
      if (words.find(" % timing") != std::string::npos) {
        const double share = std::stod(words.substr(words.rfind('(') + 1));
        EXPECT_GE(share, 0) << words;
        EXPECT_LE(share, 100) << words;
      }
    }
  }
}

// The page's "What a burst does" blames the bursts only when the timing is
// the larger factor.
TEST(AttributionWords, ThePageBlamesBurstsOnlyWhenTimingIsLarger) {
  const nlohmann::ordered_json settings = {{"run", {{"mode", "compare"}}}};
  const auto page = [&](double recorded, double retimed, double synthetic) {
    ModeResult rec = mode("recorded", recorded, 1), ret = mode("retimed", retimed, 1),
               syn = mode("synthetic", synthetic, 1);
    syn.arrivals = "poisson";
    return report_html(settings, {&rec, &syn}, {}, "", {}, &ret);
  };
  const std::string sizes = page(4.124, 4.304, 0.6031);
  EXPECT_THAT(sizes, ::testing::Not(HasSubstr("While a burst lasts")));
  EXPECT_THAT(sizes, HasSubstr("the bursts are not the larger part of the gap: the size mix is"));
  EXPECT_THAT(sizes, HasSubstr("the timing pulls the other way"));
  EXPECT_THAT(page(8, 1, 0.5), HasSubstr("While a burst lasts"));
}

}  // namespace
}  // namespace infersim
