// The progress line of long commands, driven by a hand-set clock: quiet for a
// second, then a line every few seconds off a terminal, one line rewritten in
// place on a terminal, and the figures (done, rate, time left) worked out here.
#include "studies/progress_line.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <sstream>

namespace infersim {
namespace {
using ::testing::HasSubstr;

// A progress line writing to a string, on a clock the test moves.
class ProgressLineOutput : public ::testing::Test {
 protected:
  struct Step {
    double seconds;    // the clock moves on this much
    std::size_t done;  // then this many are said to be done
  };
  // A line over `total` `unit`s (at most that many when `bound`), from now.
  void start(bool terminal, const char* what, const char* unit, std::size_t total,
             bool bound = false) {
    line_.emplace(out_, terminal, what, unit, total, bound, [this] { return now_; });
  }
  void play(std::initializer_list<Step> steps) {
    for (const Step& step : steps) {
      now_ += step.seconds;
      line_->update(step.done);
    }
  }
  // What the line wrote, and no more after this.
  std::string taken() {
    std::string text = out_.str();
    out_.str("");
    return text;
  }
  double now_ = 100;  // any origin
  std::ostringstream out_;
  std::optional<ProgressLine> line_;
};

TEST_F(ProgressLineOutput, SaysNothingWhenItEndsWithinASecond) {
  for (const bool terminal : {false, true}) {
    SCOPED_TRACE(terminal ? "on a terminal" : "off a terminal");
    start(terminal, "sweep", "points", 10);
    for (std::size_t done = 1; done <= 10; ++done)
      play({{0.09, done}});
    line_->finish();  // 0.9 s in all
    EXPECT_EQ(taken(), "");
  }
}

TEST_F(ProgressLineOutput, OffATerminalWritesALineEveryFewSeconds) {
  start(false, "sweep", "points", 128);
  // A point every half second: 2 points/s.
  for (std::size_t done = 1; done <= 20; ++done)
    play({{0.5, done}});
  // Lines at 1 s (2 done: 126 left at 2/s = 63 s), then 6 s (12 done: 116 left = 58 s);
  // 10 s is only 4 s after the last.
  EXPECT_EQ(taken(),
            "sweep: 2/128 points, 2 points/s, 1 min 03 s left\n"
            "sweep: 12/128 points, 2 points/s, 58 s left\n");
  now_ += 2;  // 12 s
  line_->finish();
  EXPECT_EQ(taken(), "sweep: 20/128 points, 1.67 points/s, 1 min 05 s left\n");
}

TEST_F(ProgressLineOutput, OnATerminalRewritesOneLine) {
  start(true, "sweep", "points", 4);
  // Quiet under a second; at 1.5 s 2 left at 4/3 points/s = 1.5 s; the
  // third within the redraw interval, not drawn; the fourth at 2 s.
  play({{0.5, 1}, {1, 2}, {0.05, 3}, {0.45, 4}});
  line_->finish();
  EXPECT_EQ(taken(),
            "\rsweep: 2/4 points, 1.33 points/s, 2 s left"
            "\rsweep: 4/4 points in 2 s, 2 points/s      "
            "\rsweep: 4/4 points in 2 s, 2 points/s\n");
}

TEST_F(ProgressLineOutput, ABoundIsSaidAsOne) {
  start(false, "capacity", "runs", 24, true);
  // At 1.5 s 2 runs/s; at most 21 left: 10.5 s at that rate, said 11 s
  // (rounded); a rate, not a bound on the time.
  play({{1.5, 3}, {2.5, 8}});
  line_->finish();  // the search stopped after 8 runs
  EXPECT_EQ(taken(),
            "capacity: 3 runs of at most 24, 2 runs/s, at most 21 runs left (11 s at this rate)\n"
            "capacity: 8 runs in 4 s, 2 runs/s\n");
}

TEST_F(ProgressLineOutput, OneRunIsOne) {
  start(false, "capacity", "runs", 24, true);
  play({{4, 1}});
  EXPECT_EQ(taken(),
            "capacity: 1 run of at most 24, 0.25 runs/s, at most 23 runs left (1 min 32 s at this "
            "rate)\n");
}

TEST_F(ProgressLineOutput, UpdatesComingOutOfOrderNeverGoBack) {
  start(false, "sweep", "points", 10);
  play({{2, 5}, {6, 4}});  // 4: a slower thread's older count
  const std::string text = taken();
  EXPECT_THAT(text, HasSubstr("sweep: 5/10 points, 2.5 points/s"));
  EXPECT_THAT(text, HasSubstr("sweep: 5/10 points, 0.625 points/s, 8 s left"));
}

TEST_F(ProgressLineOutput, AnErrorEndsTheTerminalLine) {
  start(true, "sweep", "points", 10);
  play({{2, 1}});
  line_.reset();  // gone without finish(), as when an error unwinds
  EXPECT_THAT(taken(), testing::EndsWith(" left\n"));
}

TEST(ProgressLine, DurationsReadAsAPersonWritesThem) {
  EXPECT_EQ(elapsed_text(0.4), "0 s");
  EXPECT_EQ(elapsed_text(59.4), "59 s");
  EXPECT_EQ(elapsed_text(65), "1 min 05 s");
  EXPECT_EQ(elapsed_text(3599), "59 min 59 s");
  EXPECT_EQ(elapsed_text(3600 + 7 * 60 + 10), "1 h 07 min");
}

TEST(ProgressLine, AStringStreamIsNoTerminal) {
  std::ostringstream out;
  EXPECT_FALSE(writes_to_terminal(out));
}

}  // namespace
}  // namespace infersim
