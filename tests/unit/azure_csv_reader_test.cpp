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

TEST_F(AzureCsvReader, OffsetsAreExactNanosecondsFromTheFirstTimestamp) {
  const std::string path = write_temp_file("offsets",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03.9799600,4808,10\n"
                                           "2023-11-16 18:17:04.0000001,3180,8\n"
                                           "2023-11-16 18:18:03.9799601,110,27\n"
                                           "2023-11-17 18:17:03.9799600,0,0\n");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(trace.path, path);
  EXPECT_EQ(trace.format, "azure-csv");
  EXPECT_EQ(trace.origin_ns, kFirstSecond * kNsPerSecond + 979'960'000);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 20'040'100, 60 * kNsPerSecond + 100,
                                                       86'400 * kNsPerSecond}));
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{4808, 3180, 110, 0}));
  EXPECT_EQ(generated(trace), (std::vector<std::uint32_t>{10, 8, 27, 0}));
  EXPECT_EQ(trace.out_of_order, 0u);
  EXPECT_EQ(trace.total_context_tokens(), 4808u + 3180u + 110u);
  EXPECT_EQ(trace.total_generated_tokens(), 10u + 8u + 27u);
}

TEST_F(AzureCsvReader, ReadsColumnsInAnyOrderAndIgnoresExtraColumns) {
  const std::string path = write_temp_file("columns",
                                           "GeneratedTokens,Model,TIMESTAMP,Region,ContextTokens\n"
                                           "7,gpt,2023-11-16 18:17:03,eu,100\n"
                                           "9,llama,2023-11-16 18:17:05.5,us,200\n");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(trace.origin_ns, kFirstSecond * kNsPerSecond);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 2'500'000'000}));
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{100, 200}));
  EXPECT_EQ(generated(trace), (std::vector<std::uint32_t>{7, 9}));
}

TEST_F(AzureCsvReader, AcceptsCrlfLineEnds) {
  const std::string path = write_temp_file("crlf",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                           "2023-11-16 18:17:03.5,12,34\r\n"
                                           "2023-11-16 18:17:04,56,78\r\n");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 500'000'000}));
  // The \r must not stick to the last column.
  EXPECT_EQ(generated(trace), (std::vector<std::uint32_t>{34, 78}));
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{12, 56}));
}

TEST_F(AzureCsvReader, ReadsLastLineWithoutNewline) {
  const std::string path = write_temp_file("nofinalnewline",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2\n"
                                           "2023-11-16 18:17:06,3,4");
  const Trace trace = read_azure_csv(path);
  ASSERT_EQ(trace.records.size(), 2u);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 3 * kNsPerSecond}));
  EXPECT_EQ(generated(trace), (std::vector<std::uint32_t>{2, 4}));
}

TEST_F(AzureCsvReader, ReadsLastLineWithoutNewlineAfterCrlfLines) {
  const std::string path = write_temp_file("crlfnofinal",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                           "2023-11-16 18:17:03,1,2\r\n"
                                           "2023-11-16 18:17:06,3,4");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 3 * kNsPerSecond}));
  EXPECT_EQ(generated(trace), (std::vector<std::uint32_t>{2, 4}));
}

TEST_F(AzureCsvReader, SkipsUtf8ByteOrderMark) {
  const std::string path = write_temp_file("bom",
                                           "\xEF\xBB\xBF"
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,5,6\n");
  const Trace trace = read_azure_csv(path);
  ASSERT_EQ(trace.records.size(), 1u);
  EXPECT_EQ(trace.origin_ns, kFirstSecond * kNsPerSecond);
  EXPECT_EQ(trace.records[0].context_tokens, 5u);
  EXPECT_EQ(trace.records[0].generated_tokens, 6u);
}

TEST_F(AzureCsvReader, ReadsTimestampsWithTAndOffsetsOfThe2024Release) {
  const std::string path = write_temp_file("iso",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2024-05-10T00:00:00.5Z,1,1\n"
                                           "2024-05-10T02:00:01+02:00,2,2\n");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 500'000'000}));
}

TEST_F(AzureCsvReader, StablySortsAnOutOfOrderFileAndCountsLinesOutOfOrder) {
  // Seconds in file order: 5 3 5 4 3. Three lines are earlier than the line
  // before them: the 3 after the first 5, the 4 after the second 5, the last 3.
  const std::string path = write_temp_file("unsorted",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:05,1,10\n"
                                           "2023-11-16 18:17:03,2,20\n"
                                           "2023-11-16 18:17:05,3,30\n"
                                           "2023-11-16 18:17:04,4,40\n"
                                           "2023-11-16 18:17:03,5,50\n");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(trace.out_of_order, 3u);
  EXPECT_EQ(trace.origin_ns, kFirstSecond * kNsPerSecond);
  EXPECT_EQ(offsets(trace),
            (std::vector<std::int64_t>{0, 0, kNsPerSecond, 2 * kNsPerSecond, 2 * kNsPerSecond}));
  // Equal timestamps keep their order in the file: 2 before 5, 1 before 3.
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{2, 5, 4, 1, 3}));
  EXPECT_EQ(generated(trace), (std::vector<std::uint32_t>{20, 50, 40, 10, 30}));
}

TEST_F(AzureCsvReader, OriginIsTheSmallestTimestampNotTheFirst) {
  const std::string path = write_temp_file("origin",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:10,1,1\n"
                                           "2023-11-16 18:17:03.25,2,2\n"
                                           "2023-11-16 18:17:20,3,3\n");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(trace.origin_ns, kFirstSecond * kNsPerSecond + 250'000'000);
  EXPECT_EQ(trace.out_of_order, 1u);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 6'750'000'000, 16'750'000'000}));
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{2, 1, 3}));
}

TEST_F(AzureCsvReader, EqualTimestampsInOrderAreNotCountedOutOfOrder) {
  const std::string path = write_temp_file("ties",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,3,0\n"
                                           "2023-11-16 18:17:03,1,0\n"
                                           "2023-11-16 18:17:03,2,0\n");
  const Trace trace = read_azure_csv(path);
  EXPECT_EQ(trace.out_of_order, 0u);
  EXPECT_EQ(offsets(trace), (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(contexts(trace), (std::vector<std::uint32_t>{3, 1, 2}));
}

TEST_F(AzureCsvReader, MissingColumnIsNamedOnLineOne) {
  const std::string path = write_temp_file("missingcol",
                                           "TIMESTAMP,ContextTokens\n"
                                           "2023-11-16 18:17:03,1\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":1: GeneratedTokens: "));
  EXPECT_THAT(message, HasSubstr("column missing from the header"));
}

TEST_F(AzureCsvReader, ColumnNamesAreCaseSensitive) {
  const std::string path = write_temp_file("case",
                                           "timestamp,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2\n");
  EXPECT_THAT(read_error(path), StartsWith(path + ":1: TIMESTAMP: column missing"));
}

TEST_F(AzureCsvReader, DuplicatedColumnIsNamedOnLineOne) {
  const std::string path = write_temp_file("dupcol",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n"
                                           "2023-11-16 18:17:03,1,2,3\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":1: ContextTokens: "));
  EXPECT_THAT(message, HasSubstr("appears twice"));
}

TEST_F(AzureCsvReader, EmptyFileIsAnErrorOnLineOne) {
  const std::string path = write_temp_file("empty", "");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":1: "));
  EXPECT_THAT(message, HasSubstr("empty file"));
}

TEST_F(AzureCsvReader, HeaderOnlyIsAnErrorOnLineTwo) {
  const std::string path =
      write_temp_file("headeronly", "TIMESTAMP,ContextTokens,GeneratedTokens\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":2: "));
  EXPECT_THAT(message, HasSubstr("no requests after the header"));
}

TEST_F(AzureCsvReader, NonNumericTokenCountNamesLineAndField) {
  const std::string path = write_temp_file("abc",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2\n"
                                           "2023-11-16 18:17:04,abc,2\n");
  EXPECT_EQ(read_error(path), path + ":3: ContextTokens: 'abc' is not a number");
}

TEST_F(AzureCsvReader, NegativeTokenCountIsRefused) {
  const std::string path = write_temp_file("negative",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,-3\n");
  EXPECT_EQ(read_error(path), path + ":2: GeneratedTokens: '-3' is negative");
}

TEST_F(AzureCsvReader, FractionalTokenCountIsRefused) {
  const std::string path = write_temp_file("fraction",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1.5,2\n");
  EXPECT_EQ(read_error(path), path + ":2: ContextTokens: '1.5' is not a whole number of tokens");
}

TEST_F(AzureCsvReader, TokenCountOverflowIsRefused) {
  const std::string path = write_temp_file("overflow",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2\n"
                                           "2023-11-16 18:17:03,3,4\n"
                                           "2023-11-16 18:17:03,5,99999999999\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":4: GeneratedTokens: "));
  EXPECT_THAT(message, HasSubstr("'99999999999' is too large"));
}

TEST_F(AzureCsvReader, EmptyTokenCountIsRefused) {
  const std::string path = write_temp_file("emptyfield",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,,2\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":2: ContextTokens: "));
  EXPECT_THAT(message, HasSubstr("empty"));
}

TEST_F(AzureCsvReader, BadTimestampNamesLineAndTimestampField) {
  const std::string path = write_temp_file("badtime",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2\n"
                                           "2023-02-29 18:17:03,1,2\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":3: TIMESTAMP: "));
  EXPECT_THAT(message, HasSubstr("day 29 does not exist"));
}

TEST_F(AzureCsvReader, UnreadableTimestampNamesLineAndTimestampField) {
  const std::string path = write_temp_file("yesterday",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "yesterday,1,2\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":2: TIMESTAMP: "));
  EXPECT_THAT(message, HasSubstr("expected YYYY-MM-DD"));
}

TEST_F(AzureCsvReader, CountsLinesInACrlfFileForErrors) {
  const std::string path = write_temp_file("crlferror",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                           "2023-11-16 18:17:03,1,2\r\n"
                                           "2023-11-16 18:17:04,1,x\r\n");
  EXPECT_EQ(read_error(path), path + ":3: GeneratedTokens: 'x' is not a number");
}

// A NUL byte does not end the line (as it would a C string): the field
// holding it is refused.
TEST_F(AzureCsvReader, NulByteNamesTheLineAndFieldRatherThanEndingTheLine) {
  using namespace std::string_literals;
  const std::string path = write_temp_file("nul",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2\n"
                                           "2023-11-16 18:17:04,1,2\0x\n"s);
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":3: GeneratedTokens: "));
  EXPECT_THAT(message, HasSubstr("is not a number"));
}

TEST_F(AzureCsvReader, EmptyLineInsideIsNamedButBlankLinesMayEndTheFile) {
  const std::string path = write_temp_file("emptyline",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2\n"
                                           "\n"
                                           "2023-11-16 18:17:05,1,2\n");
  EXPECT_EQ(read_error(path), path + ":3: empty line inside the trace");
  // A blank last line was "too few fields".
  const std::string trailing = write_temp_file("trailing",
                                               "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                               "2023-11-16 18:17:03,1,2\r\n"
                                               "\r\n \n");
  EXPECT_EQ(read_azure_csv(trailing).records.size(), 1u);
  const std::string blank_only =
      write_temp_file("blankonly", "TIMESTAMP,ContextTokens,GeneratedTokens\n\n");
  EXPECT_EQ(read_error(blank_only), blank_only + ":2: no requests after the header");
}

// Quotes send the file to the RFC 4180 reader: every field quoted, a comma
// inside a quoted field (was "too many fields"), a quote in an ignored column.
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
  // A stray quote the in-place reading would have skipped in an ignored column.
  const std::string stray = write_temp_file("stray",
                                            "TIMESTAMP,Model,ContextTokens,GeneratedTokens\n"
                                            "2023-11-16 18:17:03,gpt\"4,1,2\n");
  EXPECT_EQ(read_error(stray), stray +
                                   ":2: Model: a quote inside an unquoted field (quote the "
                                   "whole field, doubling its quotes)");
  const std::string open = write_temp_file("open",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,\"2\n");
  EXPECT_THAT(read_error(open), StartsWith(open + ":2: GeneratedTokens: quote not closed"));
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

TEST_F(AzureCsvReader, TooFewFieldsNamesTheLine) {
  const std::string path = write_temp_file("toofew",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2\n"
                                           "2023-11-16 18:17:04,1,2\n"
                                           "2023-11-16 18:17:05,1\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":4: "));
  EXPECT_THAT(message, HasSubstr("too few fields"));
}

TEST_F(AzureCsvReader, TooManyFieldsNamesTheLine) {
  const std::string path = write_temp_file("toomany",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:17:03,1,2,3\n");
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ":2: "));
  EXPECT_THAT(message, HasSubstr("too many fields"));
}

TEST_F(AzureCsvReader, NonexistentFileIsNamedWithoutALine) {
  const std::string path = ::testing::TempDir() + "infersim_no_such_dir/no_such_trace.csv";
  const std::string message = read_error(path);
  EXPECT_THAT(message, StartsWith(path + ": "));
  EXPECT_THAT(message, HasSubstr("cannot open the trace file"));
}

TEST(ParseTokenCount, AcceptsZero) {
  std::uint32_t out = 99;
  EXPECT_EQ(parse_token_count("0", out), "");
  EXPECT_EQ(out, 0u);
}

TEST(ParseTokenCount, AcceptsLeadingZeros) {
  std::uint32_t out = 0;
  EXPECT_EQ(parse_token_count("007", out), "");
  EXPECT_EQ(out, 7u);
}

TEST(ParseTokenCount, AcceptsTheLargest32BitValue) {
  std::uint32_t out = 0;
  EXPECT_EQ(parse_token_count("4294967295", out), "");
  EXPECT_EQ(out, 4'294'967'295u);
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
  try {
    normalize_trace(trace);
    ADD_FAILURE() << "a span over 2^63 ns was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("wide.csv"));
    EXPECT_THAT(e.what(), HasSubstr("int64 nanosecond range"));
  }
}

}  // namespace
}  // namespace infersim
