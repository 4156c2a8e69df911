// Unit tests of trace/azure_csv_reader (and the normalization in trace.cpp):
// exact offsets from the Azure CSV, the forms of file it accepts, and the
// `FILE:LINE: FIELD: what` errors for the ones it refuses (MODEL.md section 2).
#include "trace/azure_csv_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "core/input_error.hpp"
#include "test_support.hpp"
#include "trace/trace.hpp"

namespace infersim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

// Each test's files in a folder of its own (test::temp_file).
class AzureCsvReader : public ::testing::Test {
 protected:
  // Writes `bytes` exactly (no newline translation) and returns the path.
  std::string write_temp_file(const std::string& stem, const std::string& bytes) {
    return test::temp_file(stem, bytes, ".csv").string();
  }
};

// Reads the trace file at `path`, which must fail, and returns the error's message.
std::string read_error(const std::string& path) {
  return test::error_of([&] { read_azure_csv(path); });
}

std::vector<std::int64_t> offsets(const Trace& trace) {
  std::vector<std::int64_t> out;
  for (const TraceRecord& r : trace.records)
    out.push_back(r.offset_ns);
  return out;
}

std::vector<std::uint32_t> contexts(const Trace& trace) {
  std::vector<std::uint32_t> out;
  for (const TraceRecord& r : trace.records)
    out.push_back(r.context_tokens);
  return out;
}

std::vector<std::uint32_t> generated(const Trace& trace) {
  std::vector<std::uint32_t> out;
  for (const TraceRecord& r : trace.records)
    out.push_back(r.generated_tokens);
  return out;
}

// 2023-11-16 18:17:03 UTC in seconds since 1970 (day 19677).
constexpr std::int64_t kFirstSecond = 1'700'158'623;

// Four requests over a day, with timestamps to the 100 ns.
constexpr const char* kDayCsv =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:17:03.9799600,4808,10\n"
    "2023-11-16 18:17:04.0000001,3180,8\n"
    "2023-11-16 18:18:03.9799601,110,27\n"
    "2023-11-17 18:17:03.9799600,0,0\n";

// A file the reader accepts, and the trace it reads: the origin (the
// smallest timestamp), how many lines came earlier than the line before
// them, and each record (in time order) as offset, context and generated
// tokens.
struct Accepted {
  const char* name;
  std::string csv;
  std::int64_t origin_ns;
  std::size_t out_of_order;
  std::vector<std::int64_t> offsets;
  std::vector<std::uint32_t> contexts;
  std::vector<std::uint32_t> generated;
};

TEST_F(AzureCsvReader, ReadsEachFormOfFileExactly) {
  const Accepted cases[] = {
      {"offsets are exact nanoseconds from the first timestamp",
       kDayCsv,
       kFirstSecond * kNsPerSecond + 979'960'000,
       0,
       {0, 20'040'100, 60 * kNsPerSecond + 100, 86'400 * kNsPerSecond},
       {4808, 3180, 110, 0},
       {10, 8, 27, 0}},
      {"columns in any order, extra columns ignored",
       "GeneratedTokens,Model,TIMESTAMP,Region,ContextTokens\n"
       "7,gpt,2023-11-16 18:17:03,eu,100\n"
       "9,llama,2023-11-16 18:17:05.5,us,200\n",
       kFirstSecond * kNsPerSecond,
       0,
       {0, 2'500'000'000},
       {100, 200},
       {7, 9}},
      // The \r must not stick to the last column.
      {"CRLF line ends",
       "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
       "2023-11-16 18:17:03.5,12,34\r\n"
       "2023-11-16 18:17:04,56,78\r\n",
       kFirstSecond * kNsPerSecond + 500'000'000,
       0,
       {0, 500'000'000},
       {12, 56},
       {34, 78}},
      {"a last line without a newline",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2\n"
       "2023-11-16 18:17:06,3,4",
       kFirstSecond * kNsPerSecond,
       0,
       {0, 3 * kNsPerSecond},
       {1, 3},
       {2, 4}},
      {"a last line without a newline after CRLF lines",
       "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
       "2023-11-16 18:17:03,1,2\r\n"
       "2023-11-16 18:17:06,3,4",
       kFirstSecond * kNsPerSecond,
       0,
       {0, 3 * kNsPerSecond},
       {1, 3},
       {2, 4}},
      {"a UTF-8 byte order mark is skipped",
       "\xEF\xBB\xBF"
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,5,6\n",
       kFirstSecond * kNsPerSecond,
       0,
       {0},
       {5},
       {6}},
      // 2024-05-10 00:00:00 UTC is 1 715 299 200 s since 1970.
      {"timestamps with T and offsets, as the 2024 release writes them",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2024-05-10T00:00:00.5Z,1,1\n"
       "2024-05-10T02:00:01+02:00,2,2\n",
       1'715'299'200 * kNsPerSecond + 500'000'000,
       0,
       {0, 500'000'000},
       {1, 2},
       {1, 2}},
      // Seconds in file order: 5 3 5 4 3. Three lines are earlier than the
      // line before them: the 3 after the first 5, the 4 after the second 5,
      // the last 3. Equal timestamps keep their order in the file: 2 before
      // 5, 1 before 3.
      {"an out-of-order file is sorted stably",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:05,1,10\n"
       "2023-11-16 18:17:03,2,20\n"
       "2023-11-16 18:17:05,3,30\n"
       "2023-11-16 18:17:04,4,40\n"
       "2023-11-16 18:17:03,5,50\n",
       kFirstSecond * kNsPerSecond,
       3,
       {0, 0, kNsPerSecond, 2 * kNsPerSecond, 2 * kNsPerSecond},
       {2, 5, 4, 1, 3},
       {20, 50, 40, 10, 30}},
      {"the origin is the smallest timestamp, not the first",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:10,1,1\n"
       "2023-11-16 18:17:03.25,2,2\n"
       "2023-11-16 18:17:20,3,3\n",
       kFirstSecond * kNsPerSecond + 250'000'000,
       1,
       {0, 6'750'000'000, 16'750'000'000},
       {2, 1, 3},
       {2, 1, 3}},
      {"equal timestamps in order are not counted out of order",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,3,0\n"
       "2023-11-16 18:17:03,1,0\n"
       "2023-11-16 18:17:03,2,0\n",
       kFirstSecond * kNsPerSecond,
       0,
       {0, 0, 0},
       {3, 1, 2},
       {0, 0, 0}},
  };
  for (const Accepted& c : cases) {
    SCOPED_TRACE(c.name);
    const Trace trace = read_azure_csv(write_temp_file("accepted", c.csv));
    EXPECT_EQ(trace.format, "azure-csv");
    EXPECT_EQ(trace.origin_ns, c.origin_ns);
    EXPECT_EQ(trace.out_of_order, c.out_of_order);
    EXPECT_EQ(offsets(trace), c.offsets);
    EXPECT_EQ(contexts(trace), c.contexts);
    EXPECT_EQ(generated(trace), c.generated);
  }
}

TEST_F(AzureCsvReader, KeepsItsPathAndTotalsTheTokens) {
  const std::string path = write_temp_file("day", kDayCsv);
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(trace.path, path);
  EXPECT_EQ(trace.total_context_tokens(), 4808u + 3180u + 110u);
  EXPECT_EQ(trace.total_generated_tokens(), 10u + 8u + 27u);
}

// A file the reader refuses, and the message that says where and why: the
// message is exactly `PATH` followed by `after_path` when `has` is null,
// otherwise it starts so and holds `has`.
struct Refused {
  const char* name;
  std::string csv;
  const char* after_path;
  const char* has = nullptr;
};

TEST_F(AzureCsvReader, RefusedFilesNameTheLineAndFieldAtFault) {
  using namespace std::string_literals;
  const Refused cases[] = {
      {"a missing column is named on line one",
       "TIMESTAMP,ContextTokens\n"
       "2023-11-16 18:17:03,1\n",
       ":1: GeneratedTokens: ", "column missing from the header"},
      {"column names are case-sensitive",
       "timestamp,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2\n",
       ":1: TIMESTAMP: column missing", ""},
      {"a duplicated column is named on line one",
       "TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n"
       "2023-11-16 18:17:03,1,2,3\n",
       ":1: ContextTokens: ", "appears twice"},
      {"an empty file is an error on line one", "", ":1: ", "empty file"},
      {"a header alone is an error on line two", "TIMESTAMP,ContextTokens,GeneratedTokens\n",
       ":2: ", "no requests after the header"},
      {"a header and a blank line are an error on line two",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n\n", ":2: no requests after the header"},
      {"a non-numeric token count names line and field",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2\n"
       "2023-11-16 18:17:04,abc,2\n",
       ":3: ContextTokens: 'abc' is not a number"},
      {"a negative token count",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,-3\n",
       ":2: GeneratedTokens: '-3' is negative"},
      {"a fractional token count",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1.5,2\n",
       ":2: ContextTokens: '1.5' is not a whole number of tokens"},
      {"a token count over 32 bits",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2\n"
       "2023-11-16 18:17:03,3,4\n"
       "2023-11-16 18:17:03,5,99999999999\n",
       ":4: GeneratedTokens: ", "'99999999999' is too large"},
      {"an empty token count",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,,2\n",
       ":2: ContextTokens: ", "empty"},
      {"a day the month does not have names line and TIMESTAMP",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2\n"
       "2023-02-29 18:17:03,1,2\n",
       ":3: TIMESTAMP: ", "day 29 does not exist"},
      {"an unreadable timestamp names line and TIMESTAMP",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "yesterday,1,2\n",
       ":2: TIMESTAMP: ", "expected YYYY-MM-DD"},
      {"lines of a CRLF file are counted",
       "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
       "2023-11-16 18:17:03,1,2\r\n"
       "2023-11-16 18:17:04,1,x\r\n",
       ":3: GeneratedTokens: 'x' is not a number"},
      // A NUL byte does not end the line (as it would a C string): the field
      // holding it is refused.
      {"a NUL byte names its line and field rather than ending the line",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2\n"
       "2023-11-16 18:17:04,1,2\0x\n"s,
       ":3: GeneratedTokens: ", "is not a number"},
      {"an empty line inside the trace",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2\n"
       "\n"
       "2023-11-16 18:17:05,1,2\n",
       ":3: empty line inside the trace"},
      {"too few fields name the line",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2\n"
       "2023-11-16 18:17:04,1,2\n"
       "2023-11-16 18:17:05,1\n",
       ":4: ", "too few fields"},
      {"too many fields name the line",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,2,3\n",
       ":2: ", "too many fields"},
      // A stray quote the in-place reading would have skipped in an ignored column.
      {"a quote inside an unquoted field",
       "TIMESTAMP,Model,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,gpt\"4,1,2\n",
       ":2: Model: a quote inside an unquoted field (quote the whole field, doubling its quotes)"},
      {"a quote not closed",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,1,\"2\n",
       ":2: GeneratedTokens: quote not closed", ""},
  };
  for (const Refused& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = write_temp_file("refused", c.csv);
    const std::string message = read_error(path);
    if (c.has == nullptr) {
      EXPECT_EQ(message, path + c.after_path);
    } else {
      EXPECT_THAT(message, StartsWith(path + c.after_path));
      EXPECT_THAT(message, HasSubstr(c.has));
    }
  }
}

// A blank last line was "too few fields".
TEST_F(AzureCsvReader, BlankLinesMayEndTheFile) {
  const std::string trailing = write_temp_file("trailing",
                                               "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                               "2023-11-16 18:17:03,1,2\r\n"
                                               "\r\n \n");
  EXPECT_EQ(read_azure_csv(trailing).records.size(), 1u);
}

// Quotes send the file to the RFC 4180 reader: every field quoted, a comma
// inside a quoted field (was "too many fields"); a quote in an unquoted
// field is refused (RefusedFilesNameTheLineAndFieldAtFault).
TEST_F(AzureCsvReader, ReadsQuotedFieldsAsRfc4180) {
  const std::string path = write_temp_file("quoted",
                                           "\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\"\n"
                                           "\"2023-11-16 18:17:03.9799600\",\"4808\",\"10\"\n"
                                           "\"2023-11-16 18:17:04.0000001\", 3180 ,8\n");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(trace.format, "azure-csv");
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 20'040'100}));
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{4808, 3180}));
  EXPECT_EQ(generated(trace), (std::vector<std::uint32_t>{10, 8}));
  const std::string comma = write_temp_file("comma",
                                            "TIMESTAMP,Model,ContextTokens,GeneratedTokens\n"
                                            "2023-11-16 18:17:03,\"gpt, 4\",1,2\n"
                                            "2023-11-16 18:17:04,\"say \"\"hi\"\"\",3,4\n");
  EXPECT_EQ(generated(read_azure_csv(comma)), (std::vector<std::uint32_t>{2, 4}));
}

TEST_F(AzureCsvReader, ReadsAFileThatCannotBeMapped) {
  // A FIFO is read rather than mapped; the result is the same.
  const std::string fifo = (test::fresh_dir() / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,1,2\n"
           "2023-11-16 18:17:04.5,3,4\n";
  });
  const Trace trace = read_azure_csv(fifo);
  writer.join();
  std::remove(fifo.c_str());
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 1'500'000'000}));
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{1, 3}));
}

// A file over 8 MiB is read in two halves on two threads: the same records
// in the same order, and an error names its line in either half, the
// earlier one when both have one.
class LargeAzureFile : public AzureCsvReader {
 protected:
  static constexpr int kRows = 400'000;  // about 13 MiB
  std::string rows(int bad_row_a = -1, int bad_row_b = -1) {
    std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    for (int i = 0; i < kRows; ++i) {
      const int s = i / 100;
      text += "2023-11-16 " + std::to_string(10 + s / 3600) + ":" + two(s / 60 % 60) + ":" +
              two(s % 60) + "." + std::to_string(100000 + i % 100) + "," +
              (i == bad_row_a || i == bad_row_b ? std::string("x") : std::to_string(i % 977)) +
              "," + std::to_string(i % 13) + "\n";
    }
    return text;
  }
  static std::string two(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }
};

TEST_F(LargeAzureFile, ReadsEveryRowInOrder) {
  const Trace trace = read_azure_csv(write_temp_file("large", rows()));
  ASSERT_EQ(trace.records.size(), static_cast<std::size_t>(kRows));
  EXPECT_EQ(trace.out_of_order, 0u);
  for (int i = 0; i < kRows; i += 997) {
    EXPECT_EQ(trace.records[i].context_tokens, static_cast<std::uint32_t>(i % 977)) << i;
    EXPECT_EQ(trace.records[i].generated_tokens, static_cast<std::uint32_t>(i % 13)) << i;
  }
  EXPECT_EQ(trace.records.back().context_tokens, static_cast<std::uint32_t>((kRows - 1) % 977));
}

// A quoted field in the second half: that thread's error gives way to the
// RFC 4180 reader, which reads every row.
TEST_F(LargeAzureFile, AQuoteInEitherHalfIsReadAsRfc4180) {
  std::string text = rows();
  const std::size_t at = text.rfind("\n", text.size() - 2) + 1;  // the last row
  const std::size_t comma = text.find(',', at);
  text.insert(text.find(',', comma + 1), "\"");
  text.insert(comma + 1, "\"");
  const Trace trace = read_azure_csv(write_temp_file("quotedlate", text));
  ASSERT_EQ(trace.records.size(), static_cast<std::size_t>(kRows));
  EXPECT_EQ(trace.records.back().context_tokens, static_cast<std::uint32_t>((kRows - 1) % 977));
}

TEST_F(LargeAzureFile, ErrorsNameTheirLineInEitherHalfAndTheEarlierWins) {
  // Row i is on line i + 2.
  const std::string late = write_temp_file("late", rows(kRows - 5));
  EXPECT_EQ(read_error(late),
            late + ":" + std::to_string(kRows - 5 + 2) + ": ContextTokens: 'x' is not a number");
  const std::string both = write_temp_file("both", rows(10, kRows - 5));
  EXPECT_EQ(read_error(both), both + ":12: ContextTokens: 'x' is not a number");
}

TEST_F(AzureCsvReader, NonexistentFileIsNamedWithoutALine) {
  const std::string path = ::testing::TempDir() + "infersim_no_such_dir/no_such_trace.csv";
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ": "));
  EXPECT_THAT(message, HasSubstr("cannot open the trace file"));
}

TEST(ParseTokenCount, AcceptsWholeNumbersUpToTheLargest32BitValue) {
  const std::pair<const char*, std::uint32_t> cases[] = {
      {"0", 0u}, {"007", 7u}, {"4294967295", 4'294'967'295u}};
  for (const auto& [text, value] : cases) {
    SCOPED_TRACE(text);
    std::uint32_t out = value == 0 ? 99 : 0;  // a value the count must replace
    EXPECT_EQ(parse_token_count(text, out), "");
    EXPECT_EQ(out, value);
  }
}

TEST(ParseTokenCount, RefusesOneMoreThanTheLargest32BitValue) {
  std::uint32_t out = 123;
  EXPECT_THAT(parse_token_count("4294967296", out), HasSubstr("'4294967296' is too large"));
  EXPECT_EQ(out, 123u) << "a refused count must leave the output alone";
}

TEST(ParseTokenCount, RefusesManyDigitsWithoutWrappingAround) {
  // 2^64 + 5 would wrap a 64-bit accumulator to 5 if overflow were checked late.
  std::uint32_t out = 0;
  EXPECT_THAT(parse_token_count("18446744073709551621", out), HasSubstr("too large"));
}

TEST(ParseTokenCount, RefusesEmptyAndNull) {
  std::uint32_t out = 0;
  EXPECT_THAT(parse_token_count("", out), HasSubstr("empty"));
  EXPECT_THAT(parse_token_count(nullptr, out), HasSubstr("empty"));
}

TEST(ParseTokenCount, SaysWhyANonCountIsRefused) {
  std::uint32_t out = 0;
  EXPECT_EQ(parse_token_count("-3", out), "'-3' is negative");
  EXPECT_EQ(parse_token_count("1.5", out), "'1.5' is not a whole number of tokens");
  EXPECT_EQ(parse_token_count("1e3", out), "'1e3' is not a whole number of tokens");
  EXPECT_EQ(parse_token_count("abc", out), "'abc' is not a number");
  EXPECT_EQ(parse_token_count("12 3", out), "'12 3' is not a number");
  EXPECT_EQ(parse_token_count("+3", out), "'+3' is not a number");
}

TEST(NormalizeTrace, SubtractsTheSmallestTimestampAndSortsStably) {
  Trace trace;
  trace.records = {{30, 1, 0}, {10, 2, 0}, {30, 3, 0}, {-5, 4, 0}};
  normalize_trace(trace);
  EXPECT_EQ(trace.origin_ns, -5);
  EXPECT_EQ(trace.out_of_order, 2u);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 15, 35, 35}));
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{4, 2, 1, 3}));
}

TEST(NormalizeTrace, RefusesASpanWiderThanTheNanosecondClock) {
  Trace trace;
  trace.path = "wide.csv";
  trace.records = {{std::numeric_limits<std::int64_t>::min(), 1, 1},
                   {std::numeric_limits<std::int64_t>::max(), 1, 1}};
  const std::string message = test::error_of([&] { normalize_trace(trace); });
  EXPECT_THAT(message, HasSubstr("wide.csv"));
  EXPECT_THAT(message, HasSubstr("int64 nanosecond range"));
}

}  // namespace
}  // namespace infersim
