// `infersim inspect` in-process: its table and JSON on small traces written
// here, its errors, and the published traces' figures.
#include "cli/inspect_command.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "core/input_error.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using test::fresh_dir;
using test::run_cli;
using test::write_file;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

// Arrivals at 0, 0.5, 0.9 and 1.2 s; context 10 20 30 40, generated 1 2 3 4.
constexpr const char* kAzureCsv =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:00:00.0,10,1\n"
    "2023-11-16 18:00:00.5,20,2\n"
    "2023-11-16 18:00:00.9,30,3\n"
    "2023-11-16 18:00:01.2,40,4\n";

std::string small_csv() {
  return write_file(fresh_dir() / "small.csv", kAzureCsv).string();
}

std::string inspect(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  EXPECT_EQ(run_inspect_command(args, out, err), 0);
  return out.str();
}

std::string inspect_error_of(const std::vector<std::string>& args) {
  return test::error_of([&] { inspect(args); });
}

// The table's line for a figure: its name, then the value after the padding.
std::string line_of(const std::string& table, const std::string& name) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + " ", 0) == 0) return line;
  }
  ADD_FAILURE() << "no line for " << name << " in\n" << table;
  return "";
}

using test::published_trace;

TEST(InspectCommand, TableNamesTheTraceAndGivesALineAFigure) {
  const std::string path = small_csv();
  const std::string table = inspect({path});
  // The heading is run's trace line: the file, its format and timestamp unit.
  EXPECT_THAT(table.substr(0, table.find('\n')),
              MatchesRegex("Trace " + path + ": azure-csv, .*timestamps.*, 4 requests\\."));
  EXPECT_THAT(line_of(table, "requests"), MatchesRegex("requests +4"));
  EXPECT_THAT(line_of(table, "span_s"), MatchesRegex("span_s +1\\.200 .*"));
  EXPECT_THAT(line_of(table, "mean_rate_rps"), MatchesRegex("mean_rate_rps +3\\.3333 .*"));
  EXPECT_THAT(line_of(table, "peak_per_second"), MatchesRegex("peak_per_second +3 .*"));
  EXPECT_THAT(line_of(table, "peak_per_minute"), MatchesRegex("peak_per_minute +4 .*"));
  EXPECT_THAT(line_of(table, "longest_gap_s"), MatchesRegex("longest_gap_s +0\\.500"));
  // Sorted 10 20 30 40: p90 at position 2.7.
  EXPECT_THAT(line_of(table, "input_tokens"),
              MatchesRegex("input_tokens +mean +25\\.0 +p50 +25\\.0 +p90 +37\\.0 +p99 +39\\.7 "
                           "+max +40"));
  EXPECT_THAT(line_of(table, "block_reuse"), MatchesRegex("block_reuse +- *"));
  // The values share one right edge.
  EXPECT_EQ(line_of(table, "requests").size(), line_of(table, "longest_gap_s").size());
}

TEST(InspectCommand, JsonHoldsTheFiguresAndHowTheTraceWasRead) {
  const std::string path = small_csv();
  const auto json = nlohmann::json::parse(inspect({"--json", "--trace", path}));
  EXPECT_EQ(json["trace"], path);
  EXPECT_EQ(json["format"], "azure-csv");
  EXPECT_EQ(json["timestamp_unit"], "datetime");
  EXPECT_EQ(json["requests"], 4);
  EXPECT_DOUBLE_EQ(json["span_s"].get<double>(), 1.2);
  EXPECT_EQ(json["peak_per_second"], 3);
  EXPECT_DOUBLE_EQ(json["output_tokens"]["mean"].get<double>(), 2.5);
  EXPECT_EQ(json["output_tokens"]["max"], 4);
  EXPECT_TRUE(json["index_of_dispersion_10s"].is_null());
  EXPECT_TRUE(json["blocks_seen"].is_null());
  EXPECT_TRUE(json["block_reuse"].is_null());
}

TEST(InspectCommand, MooncakeHashIdsGiveBlockReuse) {
  const auto path = write_file(fresh_dir() / "small.jsonl",
                               "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 5, "
                               "\"hash_ids\": [1, 2]}\n"
                               "{\"timestamp\": 1500, \"input_length\": 1536, \"output_length\": "
                               "6, \"hash_ids\": [1, 2, 3]}\n"
                               "{\"timestamp\": 2500, \"input_length\": 512, \"output_length\": "
                               "7, \"hash_ids\": [4]}\n");
  const auto json = nlohmann::json::parse(inspect({path.string(), "--json"}));
  EXPECT_EQ(json["format"], "mooncake-jsonl");
  EXPECT_EQ(json["timestamp_unit"], "ms");
  EXPECT_DOUBLE_EQ(json["span_s"].get<double>(), 2.5);
  EXPECT_EQ(json["blocks_seen"], 6);
  EXPECT_EQ(json["distinct_blocks"], 4);
  EXPECT_DOUBLE_EQ(json["block_reuse"].get<double>(), 2.0 / 6);
  const std::string table = inspect({path.string()});
  EXPECT_THAT(table, HasSubstr(": mooncake-jsonl, timestamps in ms, 3 requests"));
  EXPECT_THAT(line_of(table, "block_reuse"),
              MatchesRegex("block_reuse +0\\.3333 .*\\(33\\.33 %\\)"));
}

TEST(InspectCommand, ReadsNamedColumnsUnitsAndFilters) {
  const auto path = write_file(fresh_dir() / "named.csv",
                               "t,in,out,model\n"
                               "0,10,1,a\n"
                               "2000,20,2,b\n"
                               "5000,30,3,a\n");
  const auto json = nlohmann::json::parse(
      inspect({path.string(), "--json", "--timestamp-column", "t", "--input-column", "in",
               "--output-column", "out", "--timestamp-unit", "ms", "--filter", "model=a"}));
  EXPECT_EQ(json["format"], "csv");
  EXPECT_EQ(json["timestamp_unit"], "ms");
  EXPECT_EQ(json["filtered_out"], 1);
  EXPECT_EQ(json["requests"], 2);
  EXPECT_DOUBLE_EQ(json["span_s"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(json["input_tokens"]["mean"].get<double>(), 20);
}

TEST(InspectCommand, BadInputIsAnInputError) {
  EXPECT_THAT(inspect_error_of({"--jsn"}),
              HasSubstr("--jsn: unknown option (did you mean --json?)"));
  EXPECT_THAT(inspect_error_of({"/nonexistent/trace.csv"}), HasSubstr("/nonexistent/trace.csv"));
  EXPECT_THAT(inspect_error_of({"a.csv", "b.csv"}), HasSubstr("one positional argument"));
  EXPECT_THAT(inspect_error_of({"a.csv", "--trace", "b.csv"}), HasSubstr("given more than once"));
  EXPECT_THAT(inspect_error_of({small_csv(), "--timestamp-unit", "days"}),
              HasSubstr("--timestamp-unit"));
  EXPECT_THAT(inspect_error_of({small_csv(), "--filter", "nocolumn"}), HasSubstr("--filter"));
}

TEST(InspectCommand, IsACommandOfTheProgram) {
  const auto help = run_cli({"inspect", "--help"});
  EXPECT_EQ(help.status, 0);
  for (const char* flag : {"--json", "--format", "--timestamp-column", "--input-column",
                           "--output-column", "--hash-ids-column", "--timestamp-unit", "--filter"})
    EXPECT_THAT(help.out, HasSubstr(flag));
  EXPECT_THAT(run_cli({"--help"}).out, HasSubstr("inspect"));
  const auto typo = run_cli({"inspec"});
  EXPECT_EQ(typo.status, 2);
  EXPECT_THAT(typo.err, HasSubstr("did you mean inspect?"));
  const auto missing = run_cli({"inspect", "/nonexistent/trace.csv"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/trace.csv"));
  const auto ok = run_cli({"inspect", small_csv()});
  EXPECT_EQ(ok.status, 0);
  EXPECT_THAT(ok.out, HasSubstr("peak_per_second"));
}

// The published traces (fetched by trace/fetch, checked against SHA256SUMS).
TEST(InspectCommand, AzureCodeTraceIsFarBurstierThanPoisson) {
  // Figures checked against an independent computation from the CSV.
  const auto json =
      nlohmann::json::parse(inspect({published_trace("azure_llm_code_1h.csv"), "--json"}));
  EXPECT_EQ(json["format"], "azure-csv");
  EXPECT_EQ(json["timestamp_unit"], "datetime");
  EXPECT_EQ(json["requests"], 8819);
  EXPECT_NEAR(json["span_s"].get<double>(), 3435.948056, 1e-9);
  EXPECT_EQ(json["peak_per_second"], 67);
  EXPECT_EQ(json["peak_per_minute"], 632);
  EXPECT_NEAR(json["interarrival_cv"].get<double>(), 13.1513, 1e-4);
  EXPECT_NEAR(json["longest_gap_s"].get<double>(), 217.168952, 1e-9);
  EXPECT_NEAR(json["index_of_dispersion_1s"].get<double>(), 13.1820, 1e-4);
  EXPECT_NEAR(json["index_of_dispersion_10s"].get<double>(), 71.3003, 1e-4);
  EXPECT_NEAR(json["index_of_dispersion_60s"].get<double>(), 160.5435, 1e-4);
  EXPECT_DOUBLE_EQ(json["input_tokens"]["p90"].get<double>(), 5187.6);
  EXPECT_NEAR(json["output_tokens"]["p99"].get<double>(), 251.46, 1e-9);
  EXPECT_TRUE(json["block_reuse"].is_null());
}

TEST(InspectCommand, MooncakeConversationTraceReusesPromptBlocks) {
  const auto json = nlohmann::json::parse(
      inspect({published_trace("mooncake_conversation_trace.jsonl"), "--json"}));
  EXPECT_EQ(json["format"], "mooncake-jsonl");
  EXPECT_EQ(json["timestamp_unit"], "ms");
  EXPECT_EQ(json["requests"], 12031);
  EXPECT_EQ(json["blocks_seen"], 288500);
  EXPECT_EQ(json["distinct_blocks"], 182790);
  EXPECT_DOUBLE_EQ(json["block_reuse"].get<double>(), (288500.0 - 182790) / 288500);
  EXPECT_NEAR(json["index_of_dispersion_1s"].get<double>(), 7.8941, 1e-4);
}

}  // namespace
}  // namespace infersim
