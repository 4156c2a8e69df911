// Every trace format read exactly, auto-detected, with its errors pointing at
// file, line and field.
#include "trace/trace_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/input_error.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
using ::testing::StartsWith;

class TraceReader : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir(); }
  std::string file(const std::string& name, const std::string& bytes) {
    return test::write_file(dir_ / name, bytes).string();
  }
  static std::string error_of(const TraceSource& source) {
    try {
      read_trace(source);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  std::filesystem::path dir_;
};

TraceSource at(const std::string& path) {
  TraceSource s;
  s.path = path;
  return s;
}

TEST_F(TraceReader, MooncakeTimestampsAreMillisecondsExactly) {
  const auto path =
      file("t.jsonl",
           "{\"timestamp\": 1000, \"input_length\": 10, \"output_length\": 2, "
           "\"hash_ids\": [0, 1]}\n"
           "{\"timestamp\": 1000.5, \"input_length\": 11, \"output_length\": 3, "
           "\"hash_ids\": [0, 2, 3]}\n"
           "{\"timestamp\": 1000.0000015, \"input_length\": 12, \"output_length\": 4}\n");
  const Trace trace = read_trace(at(path));
  EXPECT_EQ(trace.format, "mooncake-jsonl");
  EXPECT_EQ(trace.timestamp_unit, "ms");
  ASSERT_EQ(trace.records.size(), 3u);
  EXPECT_EQ(trace.origin_ns, 1'000'000'000);  // integer: 1000 * 1e6
  // reals: llround(t * 1e6); 1000.0000015 ms is 1000000001.5 ns -> ...002 after rounding half away
  EXPECT_EQ(trace.records[1].offset_ns, 2);
  EXPECT_EQ(trace.records[1].context_tokens, 12u);
  EXPECT_EQ(trace.records[2].offset_ns, 500'000);
  EXPECT_EQ(trace.records[2].generated_tokens, 3u);
}

TEST_F(TraceReader, HashIdsFollowTheirRequestThroughTheSort) {
  const auto path = file(
      "t.jsonl",
      "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [7, 8, 9]}\n"
      "{\"timestamp\": 0, \"input_length\": 2, \"output_length\": 1, \"hash_ids\": [4]}\n");
  const Trace trace = read_trace(at(path));
  EXPECT_EQ(trace.out_of_order, 1u);
  ASSERT_EQ(trace.records.size(), 2u);
  const TraceRecord& first = trace.records[0];
  EXPECT_EQ(first.context_tokens, 2u);
  ASSERT_EQ(trace.hash_ids_of(0).size(), 1u);
  EXPECT_EQ(trace.hash_ids_of(0)[0], 4u);
  EXPECT_EQ(trace.records[1].context_tokens, 1u);
  ASSERT_EQ(trace.hash_ids_of(1).size(), 3u);
  EXPECT_EQ(trace.hash_ids_of(1)[2], 9u);
}

TEST_F(TraceReader, BurstGptReadsSecondsAndFiltersRows) {
  const auto path = file("burst.csv",
                         "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                         "5,ChatGPT,472,18,490,Conversation log\n"
                         "45,GPT-4,1087,230,1317,Conversation log\n"
                         "118.5,GPT-4,417,276,693,Conversation log\n");
  TraceSource source = at(path);
  const Trace all = read_trace(source);
  EXPECT_EQ(all.format, "burstgpt-csv");
  EXPECT_EQ(all.timestamp_unit, "s");
  ASSERT_EQ(all.records.size(), 3u);
  EXPECT_EQ(all.records[2].offset_ns, 113'500'000'000);
  source.filters = {{"Model", "GPT-4"}};
  const Trace gpt4 = read_trace(source);
  ASSERT_EQ(gpt4.records.size(), 2u);
  EXPECT_EQ(gpt4.filtered_out, 1u);
  EXPECT_EQ(gpt4.records[0].context_tokens, 1087u);
  EXPECT_EQ(gpt4.records[1].offset_ns, 73'500'000'000);
  source.filters = {{"Model", "Claude"}};
  EXPECT_THAT(error_of(source), HasSubstr("no requests match the filters"));
  source.filters = {{"Modle", "GPT-4"}};
  EXPECT_THAT(error_of(source), StartsWith(path + ":1: Modle: column missing"));
}

TEST_F(TraceReader, GenericCsvNeedsItsColumnsNamed) {
  const auto path = file("mine.csv", "when,prompt,completion\n0.25,10,5\n1.5,20,6\n");
  EXPECT_THAT(error_of(at(path)), HasSubstr("--timestamp-column"));
  TraceSource source = at(path);
  source.columns = {"when", "prompt", "completion", ""};
  const Trace trace = read_trace(source);
  EXPECT_EQ(trace.format, "csv");
  EXPECT_EQ(trace.timestamp_unit, "s");  // numbers default to seconds
  EXPECT_EQ(trace.records[1].offset_ns, 1'250'000'000);
  source.unit = TimestampUnit::kMilliseconds;
  EXPECT_EQ(read_trace(source).records[1].offset_ns, 1'250'000);
}

TEST_F(TraceReader, GenericCsvReadsDatetimesAndQuotedFields) {
  const auto path = file("q.csv",
                         "\"at\",\"in\",\"out\",note\n"
                         "\"2024-05-10 00:00:01.5\",3,4,\"a, quoted \"\"note\"\"\"\n"
                         "2024-05-10 00:00:00,1,2,plain\n");
  TraceSource source = at(path);
  source.columns = {"at", "in", "out", ""};
  const Trace trace = read_trace(source);
  EXPECT_EQ(trace.timestamp_unit, "datetime");
  ASSERT_EQ(trace.records.size(), 2u);
  EXPECT_EQ(trace.records[1].offset_ns, 1'500'000'000);
  EXPECT_EQ(trace.records[1].context_tokens, 3u);
}

TEST_F(TraceReader, GenericJsonlMapsKeysAndUnits) {
  const auto path = file("v.jsonl",
                         "{\"t\": 100, \"in\": 5, \"out\": 1, \"blocks\": [1, 2]}\n"
                         "{\"t\": 350, \"in\": 6, \"out\": 2, \"blocks\": []}\n");
  TraceSource source = at(path);
  source.columns = {"t", "in", "out", "blocks"};
  source.unit = TimestampUnit::kMicroseconds;
  const Trace trace = read_trace(source);
  EXPECT_EQ(trace.format, "jsonl");
  EXPECT_EQ(trace.records[1].offset_ns, 250'000);
  EXPECT_EQ(trace.hash_ids_of(0).size(), 2u);
  EXPECT_EQ(trace.hash_ids_of(1).size(), 0u);
}

TEST_F(TraceReader, ExplicitFormatOverridesDetection) {
  const auto path = file("trace.txt",
                         "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n"
                         "{\"timestamp\": 2, \"input_length\": 1, \"output_length\": 1}\n");
  TraceSource source = at(path);
  EXPECT_EQ(read_trace(source).format, "mooncake-jsonl");  // sniffed from the first character
  source.format = "mooncake-jsonl";
  EXPECT_EQ(read_trace(source).records[1].offset_ns, 2'000'000);
  source.format = "parquet";
  EXPECT_THAT(error_of(source), HasSubstr("unknown format 'parquet'"));
}

TEST_F(TraceReader, MalformedJsonlLinesPointAtLineAndField) {
  const std::string good = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n";
  EXPECT_THAT(error_of(at(file("a.jsonl", good + "{\"timestamp\": 1, \"input_length\": 2\n"))),
              StartsWith((dir_ / "a.jsonl").string() + ":2: "));
  EXPECT_THAT(error_of(at(file("b.jsonl", good + "{\"timestamp\": 1, \"input_length\": 2}\n"))),
              StartsWith((dir_ / "b.jsonl").string() + ":2: output_length: missing"));
  EXPECT_THAT(error_of(at(file("c.jsonl", good + good +
                                              "{\"timestamp\": \"x\", \"input_length\": 2, "
                                              "\"output_length\": 1}\n"))),
              StartsWith((dir_ / "c.jsonl").string() + ":3: timestamp: "));
  EXPECT_THAT(error_of(at(file("d.jsonl", good + "{\"timestamp\": 1, \"input_length\": -2, "
                                                 "\"output_length\": 1}\n"))),
              StartsWith((dir_ / "d.jsonl").string() + ":2: input_length: '-2' is negative"));
  EXPECT_THAT(error_of(at(file("e.jsonl", good + "{\"timestamp\": NaN, \"input_length\": 2, "
                                                 "\"output_length\": 1}\n"))),
              StartsWith((dir_ / "e.jsonl").string() + ":2: "));
  EXPECT_THAT(error_of(at(file("f.jsonl", good + "{\"timestamp\": 1e300, \"input_length\": 2, "
                                                 "\"output_length\": 1}\n"))),
              HasSubstr("int64 nanosecond range"));
}

TEST_F(TraceReader, TrailingBlankLinesAreFineButNotInside) {
  const std::string good = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n";
  EXPECT_EQ(read_trace(at(file("ok.jsonl", good + good + "\n\n"))).records.size(), 2u);
  EXPECT_THAT(error_of(at(file("gap.jsonl", good + "\n" + good))),
              StartsWith((dir_ / "gap.jsonl").string() + ":2: empty line inside"));
  const auto csv = file("gap.csv", "Timestamp,Request tokens,Response tokens\n1,2,3\n\n4,5,6\n");
  EXPECT_THAT(error_of(at(csv)), StartsWith(csv + ":3: empty line inside"));
  const auto trailing =
      file("end.csv", "Timestamp,Request tokens,Response tokens\r\n1,2,3\r\n\r\n");
  EXPECT_EQ(read_trace(at(trailing)).records.size(), 1u);
}

TEST_F(TraceReader, CsvFieldCountsAreChecked) {
  const auto path = file("n.csv", "Timestamp,Request tokens,Response tokens\n1,2,3\n4,5\n");
  EXPECT_THAT(error_of(at(path)), StartsWith(path + ":3: too few fields"));
}

TEST_F(TraceReader, SharedTracesReadWithTheirFacts) {
  const auto dir = test::source_dir() / "trace";
  const Trace conversation = read_trace(at((dir / "mooncake_conversation_trace.jsonl").string()));
  EXPECT_EQ(conversation.records.size(), 12031u);
  EXPECT_EQ(conversation.format, "mooncake-jsonl");
  EXPECT_GT(conversation.hash_ids.size(), 12031u);
  const Trace synthetic = read_trace(at((dir / "mooncake_synthetic_trace.jsonl").string()));
  EXPECT_EQ(synthetic.records.size(), 3993u);
  const Trace azure = read_trace(at((dir / "azure_llm_conv_1h.csv").string()));
  EXPECT_EQ(azure.records.size(), 19366u);
  EXPECT_EQ(azure.format, "azure-csv");
}

}  // namespace
}  // namespace infersim
