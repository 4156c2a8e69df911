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
  // The message of the InputError reading `source` must throw.
  static std::string error_of(const TraceSource& source) {
    return test::error_of([&] { read_trace(source); });
  }
  std::filesystem::path dir_;
};

TraceSource at(const std::string& path) {
  TraceSource s;
  s.path = path;
  return s;
}

// How a trace was read: its format, its timestamps' unit and its number of
// records ("azure-csv in datetime, 2 records").
std::string read_as(const Trace& trace) {
  return trace.format + " in " + trace.timestamp_unit + ", " +
         std::to_string(trace.records.size()) + " records";
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
  ASSERT_EQ(read_as(trace), "mooncake-jsonl in ms, 3 records");
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
  ASSERT_EQ(read_as(all), "burstgpt-csv in s, 3 records");
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

// RFC 4180: a field is wholly quoted or holds no quote; nothing after the
// closing quote, no unclosed quote (the flat splitter read "7"9 as 7).
TEST_F(TraceReader, CsvQuotesAreReadAsRfc4180OrRefusedAtTheirField) {
  TraceSource source;
  source.format = "csv";
  source.columns = {"ts", "in", "out", ""};
  source.path = file("after.csv", "ts,in,out\n0,100,\"7\"9\n");
  EXPECT_EQ(error_of(source), source.path + ":2: out: text after the closing quote");
  source.path = file("open.csv", "ts,in,out\n0,100,\"79\n");
  EXPECT_THAT(error_of(source), StartsWith(source.path + ":2: out: quote not closed"));
  source.path = file("inside.csv", "ts,in,out\n0,1\"00,7\n");
  EXPECT_THAT(error_of(source),
              StartsWith(source.path + ":2: in: a quote inside an unquoted field"));
  source.path = file("nul.csv", std::string("ts,in,out\n0,100,7\n1,2,3\0\n", 26));
  EXPECT_THAT(error_of(source), StartsWith(source.path + ":3: a NUL byte"));
  // Quoted fields, a comma and a doubled quote inside one, spaces around one.
  source.path = file("good.csv", "ts,note,in,out\n0,\"a, \"\"b\"\"\",100,  \"79\" \n2,\"\",5,6\n");
  const Trace trace = read_trace(source);
  ASSERT_EQ(trace.records.size(), 2u);
  EXPECT_EQ(trace.records[0].generated_tokens, 79u);
  EXPECT_EQ(trace.records[1].offset_ns, 2'000'000'000);
  EXPECT_EQ(trace.records[1].context_tokens, 5u);
}

// Azure's layout with every field quoted is detected, then read (it was
// refused: "TIMESTAMP: column missing"), a quoted comma included.
TEST_F(TraceReader, QuotedAzureFilesAreRead) {
  const auto path = file("quoted.csv",
                         "\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\",\"Model\"\r\n"
                         "\"2023-11-16 18:17:03.9799600\",\"4808\",\"10\",\"gpt, 4\"\r\n"
                         "\"2023-11-16 18:17:04.0000001\",\"3180\",\"8\",\"llama\"\r\n");
  const Trace trace = read_trace(at(path));
  ASSERT_EQ(read_as(trace), "azure-csv in datetime, 2 records");
  EXPECT_EQ(trace.origin_ns, 1'700'158'623'979'960'000);  // 2023-11-16 18:17:03.97996 UTC
  EXPECT_EQ(trace.records[1].offset_ns, 20'040'100);
  EXPECT_EQ(trace.records[0].context_tokens, 4808u);
  EXPECT_EQ(trace.records[1].generated_tokens, 8u);
  // Quotes in one column the in-place reading ignores only.
  const auto extra = file("extra.csv",
                          "TIMESTAMP,ContextTokens,GeneratedTokens,Model\n"
                          "2023-11-16 18:17:03,1,2,plain\n"
                          "2023-11-16 18:17:04,3,4,\"gpt, 4\"\n");
  EXPECT_EQ(read_trace(at(extra)).records.size(), 2u);
  const auto bad = file("bad.csv",
                        "\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\"\n"
                        "\"2023-11-16 18:17:03\",\"1\"0,\"2\"\n");
  EXPECT_EQ(error_of(at(bad)), bad + ":2: ContextTokens: text after the closing quote");
}

// One rule for every format: blank lines may end a file (Azure's refused a
// blank last line), a blank line before a record is an error naming it.
TEST_F(TraceReader, BlankLinesMayEndEveryFormatButNotSplitIt) {
  const std::string azure = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::string row = "2023-11-16 18:17:03,1,2\n";
  const std::string mooncake = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n";
  const std::string tokens =
      "{\"input_toks\": 1, \"output_toks\": 1, \"arrival_time_ns\": 5, \"input_tok_ids\": [9]}\n";
  const std::string tail = "\n  \r\n\n";
  EXPECT_EQ(read_trace(at(file("end.csv", azure + row + row + tail))).records.size(), 2u);
  EXPECT_EQ(read_trace(at(file("end.jsonl", mooncake + mooncake + tail))).records.size(), 2u);
  EXPECT_EQ(read_trace(at(file("end-tokens.jsonl", tokens + tokens + tail))).records.size(), 2u);
  TraceSource generic = at(file("end-generic.csv", azure + row + "\r\n"));
  generic.format = "csv";
  generic.columns = {"TIMESTAMP", "ContextTokens", "GeneratedTokens", ""};
  EXPECT_EQ(read_trace(generic).records.size(), 1u);

  const auto gap_csv = file("gap.csv", azure + row + "\n" + row);
  EXPECT_EQ(error_of(at(gap_csv)), gap_csv + ":3: empty line inside the trace");
  const auto lead_csv = file("lead.csv", azure + " \n" + row);
  EXPECT_EQ(error_of(at(lead_csv)), lead_csv + ":2: empty line inside the trace");
  const auto gap_tokens = file("gap-tokens.jsonl", tokens + "\n" + tokens);
  EXPECT_EQ(error_of(at(gap_tokens)), gap_tokens + ":2: empty line inside the trace");
}

// simdjson reads only what it is asked for: values the reader does not use
// are still checked, and a key may appear once (the flat scanner took the
// first of two and skipped [1,,2]).
TEST_F(TraceReader, InvalidJsonAndDuplicateKeysAreRefusedAtTheirField) {
  const std::string good = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n";
  auto second = [&](const std::string& name, const std::string& line) {
    return error_of(at(file(name, good + line + "\n")));
  };
  EXPECT_THAT(second("extra.jsonl",
                     R"({"timestamp": 1, "input_length": 2, "output_length": 1, "extra": [1,,2]})"),
              StartsWith((dir_ / "extra.jsonl").string() + ":2: extra[1]: "));
  EXPECT_EQ(second("twice.jsonl",
                   R"({"timestamp": 1, "input_length": 2, "output_length": 1, "input_length": 3})"),
            (dir_ / "twice.jsonl").string() + ":2: input_length: appears twice in the object");
  EXPECT_EQ(
      second("nested.jsonl",
             R"({"timestamp": 1, "input_length": 2, "output_length": 1, "x": {"a": 1, "a": 2}})"),
      (dir_ / "nested.jsonl").string() + ":2: x.a: appears twice in the object");
  EXPECT_THAT(
      second("word.jsonl", R"({"timestamp": 1, "input_length": 2, "output_length": 1, "x": tru})"),
      StartsWith((dir_ / "word.jsonl").string() + ":2: x: 'tru' is not a JSON value"));
  EXPECT_THAT(
      second("zero.jsonl", R"({"timestamp": 01, "input_length": 2, "output_length": 1})"),
      StartsWith((dir_ / "zero.jsonl").string() + ":2: timestamp: '01' is not a JSON value"));
  EXPECT_THAT(second("after.jsonl", R"({"timestamp": 1, "input_length": 2, "output_length": 1} 5)"),
              StartsWith((dir_ / "after.jsonl").string() + ":2: not a JSON object"));
  EXPECT_THAT(second("escape.jsonl",
                     R"({"timestamp": 1, "input_length": 2, "output_length": 1, "s": "\q"})"),
              StartsWith((dir_ / "escape.jsonl").string() + ":2: s: not valid JSON"));
  // A value too large for any number type is still JSON where it is not used.
  EXPECT_EQ(read_trace(at(file("big.jsonl", good + R"({"timestamp": 1, "input_length": 2, )"
                                                   R"("output_length": 1, "x": 1e999})"
                                                   "\n")))
                .records.size(),
            2u);
  // aiperf's export, nested: the same checks at every level.
  const std::string aiperf =
      R"({"metadata": {"request_start_ns": 5, "request_start_ns": 6}, "metrics": {}, "error": null})";
  const auto path = file("profile_export.jsonl", aiperf + "\n");
  EXPECT_EQ(error_of(at(path)),
            path + ":1: metadata.request_start_ns: appears twice in the object");
}

TEST_F(TraceReader, BlockIdTokensSayWhatAnIdCovers) {
  const auto dir = test::source_dir() / "trace";
  EXPECT_EQ(read_trace(at((dir / "mooncake_conversation_trace.jsonl").string())).block_id_tokens,
            512u);
  EXPECT_EQ(read_trace(at((dir / "azure_llm_code_1h.csv").string())).block_id_tokens, 0u);
  const auto plain =
      file("plain.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n");
  EXPECT_EQ(read_trace(at(plain)).block_id_tokens, 0u);  // Mooncake without hash_ids
  TraceSource generic = at(file("ids.csv", "t,in,out,ids\n0,1,1,\"[4, 5]\"\n1,1,1,\n"));
  generic.columns = {"t", "in", "out", "ids"};
  const Trace with_ids = read_trace(generic);
  EXPECT_EQ(with_ids.block_id_tokens, 512u);  // a named column's ids are taken as Mooncake's
  EXPECT_EQ(with_ids.hash_ids_of(0).size(), 2u);
  EXPECT_EQ(with_ids.hash_ids_of(1).size(), 0u);
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
