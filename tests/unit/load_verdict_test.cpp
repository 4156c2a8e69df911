// Overload said out loud: the console's warning and the report page's banner
// when a server does not keep up, on the edge server and on the batching
// server, with the figures worked out by hand; nothing when it keeps up.
#include "report/load_verdict.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "report/figure_text.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// `count` requests `gap_s` apart from 0, each with `context` and `generated`
// tokens.
std::string even_trace(int count, double gap_s, int context, int generated) {
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int i = 0; i < count; ++i) {
    const double t = i * gap_s;
    char line[96];
    std::snprintf(line, sizeof(line), "2024-01-01 00:%02d:%06.3f,%d,%d\n", static_cast<int>(t / 60),
                  t - 60 * static_cast<int>(t / 60), context, generated);
    csv += line;
  }
  return csv;
}

class Overload : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir(); }
  test::CliResult run(const std::string& name, const std::string& trace,
                      std::vector<std::string> extra) {
    const fs::path path = test::write_file(dir_ / (name + ".csv"), trace);
    std::vector<std::string> args = {
        "run", "--trace", path.string(), "--output", (dir_ / name).string(), "--plots", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args);
  }
  std::string page(const std::string& name) { return test::read_file(dir_ / name / "report.html"); }
  fs::path dir_;
};

// 20 requests 0.5 s apart on one core, each of 30 generated tokens and no
// context: 30 × 2000 MI / 60000 MIPS = 1 s of execution each, 20 s in all
// over the 9.5 s the arrivals span: 20 / 9.5 = 2.105 times what the core can
// do. The core runs them back to back from the first one's arrival at the
// server (0.015 s of hop latency, plus a few µs of transfer), so the last
// finishes at about 20.015 s and reaches its device about 0.015 s later:
// 20.03 s, 10.53 s after the last arrival at 9.5 s.
TEST_F(Overload, EdgeServerAskedForMoreThanItsCoresGiveIsWarned) {
  const auto r = run("edge", even_trace(20, 0.5, 0, 30), {"--recorded", "--cores", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("warning: recorded trace overloaded: the requests ask 2.11 times "
                               "what the 1 core can do (20.000 s of execution over the 9.500 s "
                               "the arrivals span); the last response comes 10.5"));
  // Request i (from 0) is answered about 1.03 + 0.5 i s after it is issued,
  // within its 5 s budget (2 s + 30 × 0.1 s) for i up to 7: 8 met.
  EXPECT_THAT(r.out, HasSubstr("; 8 of the 20 requests met their deadline.\n"));
  const std::string html = page("edge");
  EXPECT_THAT(html, HasSubstr("<div class=\"banner overload\" role=\"alert\" "
                              "data-mode=\"recorded\"><b>Overloaded: Recorded trace.</b> The "
                              "requests ask 2.11 times what the 1 core can do"));
  EXPECT_THAT(html, HasSubstr("Recorded trace: deadlines missed, TTFT p99 over its budget, mean "
                              "latency over its budget, overloaded</h3>"));
}

// The same requests 2 s apart: 20 s of execution over 38 s, 0.53 of the
// core; each is answered about 1.03 s after it arrives, within its 5 s
// deadline budget (2 s + 30 × 0.1 s).
TEST_F(Overload, EdgeServerThatKeepsUpIsNotWarned) {
  const auto r = run("edge", even_trace(20, 2, 0, 30), {"--recorded", "--cores", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("overloaded")));
  const std::string html = page("edge");
  EXPECT_THAT(html, Not(HasSubstr("class=\"banner")));
  EXPECT_THAT(html, HasSubstr("Kept up: the requests ask 0.53 times what the 1 core can do"));
}

// A batching replica that takes one request at a time (--max-num-seqs 1):
// 100 requests arrive within 0.99 s, each of 1000 prompt tokens and 20
// generated, one prefill step of at least c0 + 1000 cp = 6.5 ms + 19.8 ms and
// 19 decode steps of at least c0 = 6.5 ms: over 0.15 s each, over 15 s for
// all. The last response comes more than 14 s after the last arrival, far
// beyond 5 % of the 0.99 s span and the 4 s mean deadline budget (2 s + 20 ×
// 0.1 s). Nothing is summed beforehand on this server: the drain shows it.
TEST_F(Overload, BatchingServerThatCannotDrainIsWarned) {
  const std::string trace = even_trace(100, 0.01, 1000, 20);
  const auto r =
      run("batching", trace, {"--recorded", "--server", "batching", "--max-num-seqs", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("warning: recorded trace overloaded: the last response comes "));
  EXPECT_THAT(r.out, Not(HasSubstr("core")));
  EXPECT_THAT(r.out, Not(HasSubstr("edge CPU")));
  EXPECT_THAT(page("batching"), HasSubstr("<div class=\"banner overload\""));

  // With room for every request in one batch the replica keeps up.
  const auto ok = run("batched", trace, {"--recorded", "--server", "batching"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_THAT(ok.out, Not(HasSubstr("overloaded")));
  EXPECT_THAT(page("batched"), Not(HasSubstr("class=\"banner")));
}

// The verdict's figures, from the run's own result: the drain is the
// benchmark's end less the last arrival.
TEST_F(Overload, DrainIsTheLastResponseAfterTheLastArrival) {
  const auto r = run("edge", even_trace(20, 0.5, 0, 30), {"--recorded", "--cores", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "edge" / "summary.json"));
  // The benchmark runs from the first arrival (0) to the last response.
  const double drain = summary["benchmark_duration_s"].get<double>() - 9.5;
  EXPECT_NEAR(drain, 10.53, 0.01);
  EXPECT_THAT(r.out, HasSubstr("the last response comes " + duration_text(drain) +
                               " after the last arrival"));
}

}  // namespace
}  // namespace infersim
