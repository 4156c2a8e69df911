// `infersim validate` in-process: its flags, its errors and its table.
#include "cli/validate_command.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "core/input_error.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;

struct Validate {
  int status = 0;
  std::string out;
};

Validate run_validate(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int status = run_validate_command(args, out, err);
  return {status, out.str()};
}

std::string input_error_of(const std::vector<std::string>& args) {
  return test::error_of([&] { run_validate(args); });
}

using test::lines_of;

TEST(ValidateCommand, LoadsMustBeUtilizationsBelowOne) {
  EXPECT_THAT(input_error_of({"--loads", "1.2"}), HasSubstr("--loads: "));
  EXPECT_THAT(input_error_of({"--loads", "1.2"}), HasSubstr("'1.2'"));
  EXPECT_THAT(input_error_of({"--loads", "0.5,0"}), HasSubstr("'0'"));
  EXPECT_THAT(input_error_of({"--loads", "0.5,,0.8"}), HasSubstr("comma-separated"));
  EXPECT_THAT(input_error_of({"--loads", "half"}), HasSubstr("--loads: "));
}

TEST(ValidateCommand, OtherBadValuesNameTheirFlag) {
  EXPECT_THAT(input_error_of({"--cores", "0"}), HasSubstr("--cores: "));
  EXPECT_THAT(input_error_of({"--cores", "1,x"}), HasSubstr("'x'"));
  EXPECT_THAT(input_error_of({"--requests", "10"}), HasSubstr("--requests: must be at least 20"));
  EXPECT_THAT(input_error_of({"--seed", "-1"}), HasSubstr("--seed: expected a whole number"));
  EXPECT_THAT(input_error_of({"--replications", "0"}),
              HasSubstr("--replications: must be a whole number from 1"));
  // Arrivals must stay within the int64 nanosecond clock.
  EXPECT_THAT(input_error_of({"--requests", "1000000", "--loads", "0.0001"}),
              HasSubstr("--loads: rho = 0.0001 is too low for 1000000 requests"));
  EXPECT_THAT(input_error_of({"--requests", "1000000000000"}),
              HasSubstr("--requests: rho = 0.5 is too low"));
}

TEST(ValidateCommand, UnknownOptionIsNamed) {
  EXPECT_THAT(input_error_of({"--load", "0.5"}),
              HasSubstr("--load: unknown option (did you mean --loads?)"));
}

TEST(ValidateCommand, HelpListsTheOptions) {
  const Validate v = run_validate({"--help"});
  EXPECT_EQ(v.status, 0);
  for (const char* flag : {"--requests", "--seed", "--loads", "--cores", "--replications"})
    EXPECT_THAT(v.out, HasSubstr(flag));
}

TEST(ValidateCommand, PrintsARowForEachModel) {
  const Validate v = run_validate(
      {"--requests", "20000", "--loads", "0.5", "--cores", "1", "--replications", "1"});
  const std::vector<std::string> lines = lines_of(v.out);
  ASSERT_GE(lines.size(), 3u) << v.out;
  EXPECT_THAT(lines[0], HasSubstr("analytic"));
  // M/M/1 at rho 0.5 waits 1 s on average; M/D/1 half of that.
  EXPECT_THAT(lines[1], HasSubstr("M/M/c"));
  EXPECT_THAT(lines[1], HasSubstr(" 20000 "));
  EXPECT_THAT(lines[1], HasSubstr(" 1.00000 "));
  EXPECT_THAT(lines[2], HasSubstr("M/D/1"));
  EXPECT_THAT(lines[2], HasSubstr(" 0.500000 "));
  // Both wait with probability rho: Erlang C of one server, and any M/G/1.
  EXPECT_THAT(lines[0], HasSubstr("P(wait)"));
  EXPECT_THAT(lines[1], HasSubstr(" 0.5000 "));
  EXPECT_THAT(lines[2], HasSubstr(" 0.5000 "));
  EXPECT_THAT(v.out, HasSubstr("Erlang C"));
  EXPECT_THAT(v.out, HasSubstr("Pollaczek-Khinchine"));
  // Each row's verdict sits under the header's (header and rows hold one
  // two-byte ± each, so bytes count as characters do).
  for (std::size_t k = 1; k < 3; ++k) {
    EXPECT_THAT(lines[k], HasSubstr("±"));
    EXPECT_EQ(lines[k].find(" ok"), lines[0].find(" verdict")) << lines[k];
  }
  EXPECT_EQ(v.status, 0) << v.out;
}

}  // namespace
}  // namespace infersim
