// The progress line of long commands, driven by a hand-set clock: quiet for a
// second, then a line every few seconds off a terminal, one line rewritten in
// place on a terminal, and the figures (done, rate, time left) worked out here.
#include "report/progress_line.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace infersim {
namespace {
using ::testing::HasSubstr;

// A clock the test moves.
struct FakeClock {
  double now = 100;  // any origin
  ProgressLine::Clock clock() {
    return [this] { return now; };
  }
};

TEST(ProgressLine, SaysNothingWhenItEndsWithinASecond) {
  for (const bool terminal : {false, true}) {
    FakeClock time;
    std::ostringstream out;
    ProgressLine line(out, terminal, "sweep", "points", 10, false, time.clock());
    for (std::size_t done = 1; done <= 10; ++done) {
      time.now += 0.09;
      line.update(done);
    }
    line.finish();  // 0.9 s in all
    EXPECT_EQ(out.str(), "") << terminal;
  }
}

TEST(ProgressLine, OffATerminalWritesALineEveryFewSeconds) {
  FakeClock time;
  std::ostringstream out;
  ProgressLine line(out, false, "sweep", "points", 128, false, time.clock());
  // A point every half second: 2 points/s.
  for (std::size_t done = 1; done <= 20; ++done) {
    time.now += 0.5;
    line.update(done);
  }
  // Lines at 1 s (2 done: 126 left at 2/s = 63 s), then 6 s (12 done: 116 left = 58 s);
  // 10 s is only 4 s after the last.
  EXPECT_EQ(out.str(),
            "sweep: 2/128 points, 2 points/s, 1 min 03 s left\n"
            "sweep: 12/128 points, 2 points/s, 58 s left\n");
  time.now += 2;  // 12 s
  line.finish();
  EXPECT_THAT(out.str(),
              testing::EndsWith("sweep: 20/128 points, 1.67 points/s, 1 min 05 s left\n"));
}

TEST(ProgressLine, OnATerminalRewritesOneLine) {
  FakeClock time;
  std::ostringstream out;
  ProgressLine line(out, true, "sweep", "points", 4, false, time.clock());
  time.now += 0.5;
  line.update(1);  // quiet: under a second
  time.now += 1;
  line.update(2);  // 1.5 s: 2 left at 4/3 points/s = 1.5 s
  time.now += 0.05;
  line.update(3);  // within the redraw interval: not drawn
  time.now += 0.45;
  line.update(4);  // 2 s
  line.finish();
  EXPECT_EQ(out.str(),
            "\rsweep: 2/4 points, 1.33 points/s, 2 s left"
            "\rsweep: 4/4 points in 2 s, 2 points/s      "
            "\rsweep: 4/4 points in 2 s, 2 points/s\n");
}

TEST(ProgressLine, ABoundIsSaidAsOne) {
  FakeClock time;
  std::ostringstream out;
  ProgressLine line(out, false, "capacity", "runs", 24, true, time.clock());
  time.now += 1.5;
  line.update(3);  // 2 runs/s; at most 21 left: at most 10.5 s, said 11 s (rounded)
  time.now += 2.5;
  line.update(8);
  line.finish();  // the search stopped after 8 runs
  EXPECT_EQ(out.str(),
            "capacity: 3 runs of at most 24, 2 runs/s, at most 11 s left\n"
            "capacity: 8 runs in 4 s, 2 runs/s\n");
}

TEST(ProgressLine, OneRunIsOne) {
  FakeClock time;
  std::ostringstream out;
  ProgressLine line(out, false, "capacity", "runs", 24, true, time.clock());
  time.now += 4;
  line.update(1);
  EXPECT_EQ(out.str(), "capacity: 1 run of at most 24, 0.25 runs/s, at most 1 min 32 s left\n");
}

TEST(ProgressLine, UpdatesComingOutOfOrderNeverGoBack) {
  FakeClock time;
  std::ostringstream out;
  ProgressLine line(out, false, "sweep", "points", 10, false, time.clock());
  time.now += 2;
  line.update(5);
  time.now += 6;
  line.update(4);  // a slower thread's older count
  EXPECT_THAT(out.str(), HasSubstr("sweep: 5/10 points, 2.5 points/s"));
  EXPECT_THAT(out.str(), HasSubstr("sweep: 5/10 points, 0.625 points/s, 8 s left"));
}

TEST(ProgressLine, AnErrorEndsTheTerminalLine) {
  FakeClock time;
  std::ostringstream out;
  {
    ProgressLine line(out, true, "sweep", "points", 10, false, time.clock());
    time.now += 2;
    line.update(1);
  }
  EXPECT_THAT(out.str(), testing::EndsWith(" left\n"));
}

TEST(ProgressLine, DurationsReadAsAPersonWritesThem) {
  EXPECT_EQ(duration_text(0.4), "0 s");
  EXPECT_EQ(duration_text(59.4), "59 s");
  EXPECT_EQ(duration_text(65), "1 min 05 s");
  EXPECT_EQ(duration_text(3599), "59 min 59 s");
  EXPECT_EQ(duration_text(3600 + 7 * 60 + 10), "1 h 07 min");
}

TEST(ProgressLine, AStringStreamIsNoTerminal) {
  std::ostringstream out;
  EXPECT_FALSE(writes_to_terminal(out));
}

}  // namespace
}  // namespace infersim
