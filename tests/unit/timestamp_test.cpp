// Unit tests of trace/timestamp: exact integer nanoseconds from calendar
// timestamps (MODEL.md section 2). Expected values were computed apart from
// the code under test, with Python's datetime (days since 1970-01-01).
#include "trace/timestamp.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace infersim {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
constexpr std::int64_t kSecondsPerDay = 86'400;

// Parses text that must be valid and returns its nanoseconds.
std::int64_t ns_of(const std::string& text) {
  const TimestampParse parsed = parse_datetime_ns(text);
  EXPECT_THAT(parsed.error, IsEmpty()) << "for '" << text << "'";
  return parsed.ns;
}

// Parses text that must be rejected and returns the error.
std::string timestamp_error_of(const std::string& text) {
  const TimestampParse parsed = parse_datetime_ns(text);
  EXPECT_FALSE(parsed.error.empty()) << "'" << text << "' was accepted as " << parsed.ns;
  return parsed.error;
}

TEST(DaysFromCivil, MatchesKnownEpochDays) {
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(days_from_civil(1970, 1, 2), 1);
  EXPECT_EQ(days_from_civil(1969, 12, 31), -1);
  EXPECT_EQ(days_from_civil(2000, 3, 1), 11017);
  EXPECT_EQ(days_from_civil(2023, 11, 16), 19677);
  EXPECT_EQ(days_from_civil(1900, 1, 1), -25567);
  EXPECT_EQ(days_from_civil(2262, 4, 11), 106751);
  EXPECT_EQ(days_from_civil(1, 1, 1), -719162);
}

TEST(DaysFromCivil, CountsLeapDaysOfTheProlepticGregorianCalendar) {
  // 2024 is a leap year: February 29 sits between the 28th and March 1.
  EXPECT_EQ(days_from_civil(2024, 2, 29), 19782);
  EXPECT_EQ(days_from_civil(2024, 3, 1) - days_from_civil(2024, 2, 28), 2);
  // 1900 is not a leap year (divisible by 100), 2000 is (divisible by 400).
  EXPECT_EQ(days_from_civil(1900, 3, 1) - days_from_civil(1900, 2, 28), 1);
  EXPECT_EQ(days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28), 2);
  // 1600-02-29 exists in the proleptic calendar.
  EXPECT_EQ(days_from_civil(1600, 2, 29), -135081);
  // A whole 400-year era is 146097 days.
  EXPECT_EQ(days_from_civil(2400, 1, 1) - days_from_civil(2000, 1, 1), 146097);
}

TEST(ParseDatetimeNs, ReadsAzureTimestampExactly) {
  // 2023-11-16 is day 19677; 18:17:03 is 65823 s into it; .9799600 is 979960000 ns.
  constexpr std::int64_t kExpected =
      (19677 * kSecondsPerDay + 18 * 3600 + 17 * 60 + 3) * kNsPerSecond + 979'960'000;
  static_assert(kExpected == 1'700'158'623'979'960'000);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.9799600"), kExpected);
}

TEST(ParseDatetimeNs, EpochIsZero) {
  EXPECT_EQ(ns_of("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(ns_of("1970-01-01 00:00:00.000000000"), 0);
}

TEST(ParseDatetimeNs, ReadsZeroToNineFractionalDigitsAsDecimalFractions) {
  constexpr std::int64_t kBase = 1'700'158'623 * kNsPerSecond;
  EXPECT_EQ(ns_of("2023-11-16 18:17:03"), kBase);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.1"), kBase + 100'000'000);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.12"), kBase + 120'000'000);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.123"), kBase + 123'000'000);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.1234"), kBase + 123'400'000);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.12345"), kBase + 123'450'000);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.123456"), kBase + 123'456'000);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.1234567"), kBase + 123'456'700);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.12345678"), kBase + 123'456'780);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.123456789"), kBase + 123'456'789);
  // Leading zeros of the fraction are kept: .000000001 is one nanosecond.
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.000000001"), kBase + 1);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03.05"), kBase + 50'000'000);
}

TEST(ParseDatetimeNs, RejectsMoreThanNineFractionalDigits) {
  EXPECT_THAT(timestamp_error_of("2023-11-16 18:17:03.1234567891"),
              HasSubstr("more than 9 fractional"));
}

TEST(ParseDatetimeNs, RejectsDotWithoutDigits) {
  EXPECT_THAT(timestamp_error_of("2023-11-16 18:17:03."), HasSubstr("expected YYYY-MM-DD"));
}

TEST(ParseDatetimeNs, AcceptsTSeparatorLikeASpace) {
  EXPECT_EQ(ns_of("2023-11-16T18:17:03.9799600"), 1'700'158'623'979'960'000);
}

TEST(ParseDatetimeNs, ZSuffixMeansUtc) {
  EXPECT_EQ(ns_of("2023-11-16T18:17:03.9799600Z"), 1'700'158'623'979'960'000);
  EXPECT_EQ(ns_of("2023-11-16 18:17:03Z"), 1'700'158'623 * kNsPerSecond);
}

TEST(ParseDatetimeNs, PositiveOffsetIsSubtractedToReachUtc) {
  // 20:17:03 at +02:00 is 18:17:03 UTC.
  EXPECT_EQ(ns_of("2023-11-16T20:17:03.9799600+02:00"), 1'700'158'623'979'960'000);
}

TEST(ParseDatetimeNs, NegativeOffsetIsAddedToReachUtc) {
  // 13:47:03 at -04:30 is 18:17:03 UTC.
  EXPECT_EQ(ns_of("2023-11-16 13:47:03-04:30"), 1'700'158'623 * kNsPerSecond);
}

TEST(ParseDatetimeNs, OffsetCanMoveTheInstantToAnotherDay) {
  // 00:30 on January 1 at +01:00 is 23:30 on December 31 of the year before.
  EXPECT_EQ(ns_of("1970-01-01 00:30:00+01:00"), -1800 * kNsPerSecond);
}

TEST(ParseDatetimeNs, RejectsMalformedOffsets) {
  EXPECT_THAT(timestamp_error_of("2023-11-16 18:17:03+2:00"), HasSubstr("expected YYYY-MM-DD"));
  EXPECT_THAT(timestamp_error_of("2023-11-16 18:17:03+02-00"), HasSubstr("unreadable UTC offset"));
  EXPECT_THAT(timestamp_error_of("2023-11-16 18:17:03+24:00"), HasSubstr("unreadable UTC offset"));
  EXPECT_THAT(timestamp_error_of("2023-11-16 18:17:03Zulu"), HasSubstr("expected YYYY-MM-DD"));
}

TEST(ParseDatetimeNs, AcceptsLeapDayOfLeapYear) {
  EXPECT_EQ(ns_of("2024-02-29 12:00:00"), (19782 * kSecondsPerDay + 12 * 3600) * kNsPerSecond);
  EXPECT_EQ(ns_of("2000-02-29 00:00:00"), (11017 - 1) * kSecondsPerDay * kNsPerSecond);
}

TEST(ParseDatetimeNs, RejectsLeapDayOfCommonYear) {
  const std::string error = timestamp_error_of("2023-02-29 00:00:00");
  EXPECT_THAT(error, HasSubstr("day 29 does not exist"));
  EXPECT_THAT(error, HasSubstr("2023-02"));
  // 1900 is divisible by 100 and not by 400: no February 29.
  EXPECT_THAT(timestamp_error_of("1900-02-29 00:00:00"), HasSubstr("day 29 does not exist"));
}

TEST(ParseDatetimeNs, RejectsFebruaryThirtieth) {
  EXPECT_THAT(timestamp_error_of("2024-02-30 00:00:00"),
              HasSubstr("day 30 does not exist in 2024-02"));
}

TEST(ParseDatetimeNs, RejectsDaysBeyondTheMonth) {
  EXPECT_THAT(timestamp_error_of("2023-04-31 00:00:00"),
              HasSubstr("day 31 does not exist in 2023-04"));
  EXPECT_THAT(timestamp_error_of("2023-01-00 00:00:00"), HasSubstr("day 0 does not exist"));
  EXPECT_EQ(ns_of("2023-12-31 23:59:59"), ns_of("2024-01-01 00:00:00") - kNsPerSecond);
}

TEST(ParseDatetimeNs, RejectsMonthThirteenAndMonthZero) {
  EXPECT_THAT(timestamp_error_of("2023-13-01 00:00:00"), HasSubstr("month 13 does not exist"));
  EXPECT_THAT(timestamp_error_of("2023-00-01 00:00:00"), HasSubstr("month 0 does not exist"));
}

TEST(ParseDatetimeNs, RejectsHourTwentyFour) {
  EXPECT_THAT(timestamp_error_of("2023-11-16 24:00:00"), HasSubstr("hour 24 does not exist"));
}

TEST(ParseDatetimeNs, RejectsMinuteSixtyAndSecondSixty) {
  EXPECT_THAT(timestamp_error_of("2023-11-16 12:60:00"), HasSubstr("minute 60 does not exist"));
  EXPECT_THAT(timestamp_error_of("2023-11-16 12:00:60"), HasSubstr("second 60 does not exist"));
}

TEST(ParseDatetimeNs, RejectsTextThatIsNotATimestamp) {
  const std::string error = timestamp_error_of("yesterday");
  EXPECT_THAT(error, HasSubstr("expected YYYY-MM-DD HH:MM:SS"));
  EXPECT_THAT(error, HasSubstr("'yesterday'"));
  EXPECT_THAT(timestamp_error_of(""), HasSubstr("expected YYYY-MM-DD"));
  EXPECT_THAT(timestamp_error_of("2023-11-16"), HasSubstr("expected YYYY-MM-DD"));
  EXPECT_THAT(timestamp_error_of("2023/11/16 18:17:03"), HasSubstr("expected YYYY-MM-DD"));
  EXPECT_THAT(timestamp_error_of("2023-11-16_18:17:03"), HasSubstr("expected YYYY-MM-DD"));
  EXPECT_THAT(timestamp_error_of("2023-11-16 18:17:3x"), HasSubstr("expected YYYY-MM-DD"));
  EXPECT_THAT(timestamp_error_of("2023-11-16 18:17:03.5 "), HasSubstr("expected YYYY-MM-DD"));
}

TEST(ParseDatetimeNs, FailureLeavesNanosecondsAtZero) {
  EXPECT_EQ(parse_datetime_ns("2023-02-29 10:00:00").ns, 0);
}

TEST(ParseDatetimeNs, DatesBefore1970AreNegative) {
  EXPECT_EQ(ns_of("1969-12-31 23:59:59"), -kNsPerSecond);
  EXPECT_EQ(ns_of("1969-12-31 23:59:59.999999999"), -1);
  EXPECT_EQ(ns_of("1900-01-01 00:00:00"), -2'208'988'800 * kNsPerSecond);
}

TEST(ParseDatetimeNs, ReadsTheLastRepresentableNanosecond) {
  // INT64_MAX ns is 2262-04-11 23:47:16.854775807 UTC.
  EXPECT_EQ(ns_of("2262-04-11 23:47:16.854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_THAT(timestamp_error_of("2262-04-11 23:47:16.854775808"),
              HasSubstr("outside the int64 nanosecond range"));
}

TEST(ParseDatetimeNs, ReportsYear2263OutOfRange) {
  const std::string error = timestamp_error_of("2263-01-01 00:00:00");
  EXPECT_THAT(error, HasSubstr("outside the int64 nanosecond range"));
  EXPECT_THAT(error, HasSubstr("2263-01-01 00:00:00"));
}

TEST(ParseDatetimeNs, ReportsYear1677BeforeTheRangeOutOfRange) {
  EXPECT_THAT(timestamp_error_of("1677-01-01 00:00:00"),
              HasSubstr("outside the int64 nanosecond range"));
  // 1677-09-21 00:12:44 UTC is -9223372036 s: representable.
  EXPECT_EQ(ns_of("1677-09-21 00:12:44"), -9'223'372'036 * kNsPerSecond);
}

TEST(ParseDatetimeNs, ReadsTheFirstRepresentableNanosecond) {
  // INT64_MIN ns is 1677-09-21 00:12:43.145224192 UTC: representable, so accepted.
  EXPECT_EQ(ns_of("1677-09-21 00:12:43.145224192"), std::numeric_limits<std::int64_t>::min());
  EXPECT_THAT(timestamp_error_of("1677-09-21 00:12:43.145224191"),
              HasSubstr("outside the int64 nanosecond range"));
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

// The reader that remembers the last date gives what parse_datetime_ns gives,
// line after line, on good timestamps and bad, sharing a date or not.
TEST(DatetimeReader, ReadsEveryLineAsParseDatetimeDoes) {
  const std::vector<std::string> lines = {"2023-11-16 18:15:46.6805900",
                                          "2023-11-16 18:15:46",
                                          "2023-11-16 18:15:46.1",
                                          "2023-11-16 23:59:59.999999999",
                                          "2023-11-16 24:00:00",
                                          "2023-11-16 18:61:00",
                                          "2023-11-16 18:15:60",
                                          "2023-11-16 18:15:46.",
                                          "2023-11-16 18:15:46.1234567890",
                                          "2023-11-16 18:15:46Z",
                                          "2023-11-16T18:15:46.5",
                                          "2023-11-16 18:15:46+01:00",
                                          "2023-11-16 1a:15:46",
                                          "2023-11-16 18-15:46",
                                          "2023-11-16 18:15:46.12x",
                                          "2023-11-17 00:00:00.5",
                                          "2023-11-17 00:00:01",
                                          "2024-02-29 12:00:00",
                                          "2023-02-29 12:00:00",
                                          "2023-02-29 12:00:01",
                                          "2262-04-11 23:47:16.854775807",
                                          "2262-04-11 23:47:16.854775808",
                                          "2262-04-11 23:47:16.854775807",
                                          "1677-09-21 00:12:43.145224192",
                                          "yesterday",
                                          "",
                                          "2023-11-16 18:15:46.6805900",
                                          "2023-11-16 18:15:46.6805900 "};
  DatetimeReader reader;
  for (const std::string& line : lines) {
    const TimestampParse a = reader.read(line);
    const TimestampParse b = parse_datetime_ns(line);
    EXPECT_EQ(a.error, b.error) << line;
    EXPECT_EQ(a.ns, b.ns) << line;
  }
}

}  // namespace
}  // namespace infersim
