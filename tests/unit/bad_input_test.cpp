// Bad input of every kind, through the whole command line: each is refused with
// one line on stderr that points at the file, line and field (or the flag), exit
// status 2, and no run folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/utf8.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
constexpr const char* kAzureRow = "2023-11-16 18:15:46.6805900,374,44\n";

std::string azure(const std::string& rows) {
  return std::string(kAzureHeader) + kAzureRow + rows;
}

std::string mooncake_line(const std::string& timestamp, const std::string& input,
                          const std::string& output) {
  return "{\"timestamp\": " + timestamp + ", \"input_length\": " + input +
         ", \"output_length\": " + output + ", \"hash_ids\": [1, 2]}\n";
}

std::string mooncake(const std::string& second_line) {
  return mooncake_line("0", "10", "2") + second_line;
}

// Random bytes, NUL included, from a fixed seed (a linear congruential step).
std::string garbage(std::size_t size) {
  std::string bytes;
  std::uint32_t state = 12345;
  for (std::size_t i = 0; i < size; ++i) {
    state = state * 1664525u + 1013904223u;
    bytes += static_cast<char>(state >> 24);
  }
  bytes[7] = '\0';
  bytes[100] = '\0';
  return bytes;
}

// A bad trace file: its name, its bytes, and what the one error line must hold
// after the program's name: `FILE:LINE: FIELD: ` (line 0 = none, field empty =
// none) and a phrase of the explanation.
struct BadTrace {
  std::string label;
  std::string name;
  std::string bytes;
  int line;
  std::string field;
  std::string says;
};

void PrintTo(const BadTrace& c, std::ostream* os) {
  *os << c.label;
}

std::vector<BadTrace> bad_traces() {
  return {
      {"Empty", "t.csv", "", 1, "", "empty file"},
      {"EmptyJsonl", "t.jsonl", "", 1, "", "empty file"},
      {"HeaderOnly", "t.csv", kAzureHeader, 2, "", "no requests"},
      {"MissingColumn", "t.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,374\n", 1,
       "GeneratedTokens", "missing"},
      {"RenamedColumn", "t.csv",
       "Timestamp,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n", 1, "TIMESTAMP",
       "missing"},
      {"DuplicatedColumn", "t.csv",
       "TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n2023-11-16 18:15:46,1,1,1\n", 1,
       "ContextTokens", "twice"},
      {"ExtraFieldEveryRow", "t.csv", std::string(kAzureHeader) + "2023-11-16 18:15:46,1,1,7\n", 2,
       "", "too many fields"},
      {"TooFewFields", "t.csv", azure("2023-11-16 18:15:47,374\n"), 3, "", "too few fields"},
      {"TooManyFields", "t.csv", azure("2023-11-16 18:15:47,374,44,9\n"), 3, "", "too many fields"},
      {"NonNumericTokens", "t.csv", azure("2023-11-16 18:15:47,abc,44\n"), 3, "ContextTokens",
       "not a number"},
      {"NegativeTokens", "t.csv", azure("2023-11-16 18:15:47,374,-4\n"), 3, "GeneratedTokens",
       "negative"},
      {"FractionalTokens", "t.csv", azure("2023-11-16 18:15:47,37.5,44\n"), 3, "ContextTokens",
       "whole number"},
      {"OverflowingTokens", "t.csv", azure("2023-11-16 18:15:47,374,99999999999999999999\n"), 3,
       "GeneratedTokens", "too large"},
      {"Month13", "t.csv", azure("2023-13-16 18:15:47,374,44\n"), 3, "TIMESTAMP",
       "month 13 does not exist"},
      {"February30", "t.csv", azure("2024-02-30 18:15:47,374,44\n"), 3, "TIMESTAMP",
       "day 30 does not exist"},
      {"Yesterday", "t.csv", azure("yesterday,374,44\n"), 3, "TIMESTAMP", "expected YYYY-MM-DD"},
      {"Year2300", "t.csv", azure("2300-01-01 00:00:00,374,44\n"), 3, "TIMESTAMP",
       "int64 nanosecond range"},
      {"BinaryGarbageCsv", "t.csv", garbage(4096), 1, "", ""},
      {"BinaryGarbageJsonl", "t.jsonl", garbage(4096), 1, "", ""},
      {"BinaryGarbageAfterHeader", "t.csv", std::string(kAzureHeader) + garbage(512), 2, "", ""},
      {"JsonSyntaxError", "t.jsonl", mooncake("{\"timestamp\": 5, \"input_length\": 3\n"), 2, "",
       "not a JSON object"},
      {"JsonMissingField", "t.jsonl", mooncake("{\"timestamp\": 5, \"input_length\": 3}\n"), 2,
       "output_length", "missing"},
      {"JsonWrongType", "t.jsonl", mooncake(mooncake_line("5", "\"ten\"", "2")), 2, "input_length",
       "expected a number"},
      {"JsonHashIdsNotAList", "t.jsonl",
       mooncake("{\"timestamp\": 5, \"input_length\": 3, \"output_length\": 1, \"hash_ids\": 4}\n"),
       2, "hash_ids", "list"},
      {"JsonNaN", "t.jsonl", mooncake(mooncake_line("5", "NaN", "2")), 2, "input_length", "NaN"},
      {"JsonNaNTimestamp", "t.jsonl", mooncake(mooncake_line("NaN", "3", "2")), 2, "timestamp",
       "NaN"},
      {"JsonNegativeTokens", "t.jsonl", mooncake(mooncake_line("5", "-3", "2")), 2, "input_length",
       "negative"},
      {"JsonYear2300InMs", "t.jsonl", mooncake(mooncake_line("10413792000000", "3", "2")), 2,
       "timestamp", "int64 nanosecond range"},
  };
}

using test::one_error_line;

class BadTraceFile : public ::testing::TestWithParam<BadTrace> {};

TEST_P(BadTraceFile, IsRefusedWithOneLinePointingAtIt) {
  const BadTrace& c = GetParam();
  const fs::path dir = test::fresh_dir(c.label);
  const std::string path = test::write_file(dir / c.name, c.bytes).string();
  const fs::path output = dir / "run";
  const auto r = test::run_cli({"run", "--recorded", "--trace", path, "--output", output.string()});
  const std::string line = one_error_line(r);
  std::string expected = path;
  if (c.line > 0) expected += ":" + std::to_string(c.line);
  expected += ": ";
  if (!c.field.empty()) expected += c.field + ": ";
  EXPECT_THAT(line, StartsWith(expected));
  EXPECT_GT(line.size(), expected.size() + 8) << "the error says what is wrong";
  EXPECT_THAT(line, HasSubstr(c.says));
  EXPECT_FALSE(fs::exists(output));
}

INSTANTIATE_TEST_SUITE_P(Table, BadTraceFile, ::testing::ValuesIn(bad_traces()),
                         [](const auto& info) { return info.param.label; });

// A bad settings file: the file, then the key, then what is wrong.
struct BadSettings {
  std::string label;
  std::string json;
  std::string key;  // empty: the file's line instead
  std::string says;
};

void PrintTo(const BadSettings& c, std::ostream* os) {
  *os << c.label;
}

// A batching run of one autoscaled class, its autoscale object holding `extra`.
std::string autoscaled(const std::string& extra) {
  return R"({"server": {"kind": "batching"}, "batching": {"fleet": [{"name": "a", )"
         R"("autoscale": {"min": 1, "max": 2, )" +
         extra + "}}]}}";
}

// A disaggregated fleet, the batching section holding `extra` too.
std::string split(const std::string& extra) {
  return R"({"server": {"kind": "batching"}, "batching": {)" + extra +
         R"(, "fleet": [{"name": "p", "role": "prefill"}, {"name": "d", "role": "decode"}]}})";
}

class BadSettingsFile : public ::testing::TestWithParam<BadSettings> {};

TEST_P(BadSettingsFile, IsRefusedNamingTheFileAndKey) {
  const BadSettings& c = GetParam();
  const fs::path dir = test::fresh_dir(c.label);
  const std::string trace = test::write_file(dir / "t.csv", azure("")).string();
  const std::string settings = test::write_file(dir / "s.json", c.json).string();
  const fs::path output = dir / "run";
  const auto r = test::run_cli(
      {"run", "--recorded", "--settings", settings, "--trace", trace, "--output", output.string()});
  const std::string line = one_error_line(r);
  EXPECT_THAT(line, StartsWith(settings + (c.key.empty() ? ":" : ": " + c.key + ": ")));
  EXPECT_THAT(line, HasSubstr(c.says));
  EXPECT_FALSE(fs::exists(output));
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadSettingsFile,
    ::testing::Values(
        BadSettings{"UnknownKeySuggestsTheNearest", R"({"server": {"core": 2}})", "server.core",
                    "did you mean 'server.cores'?"},
        BadSettings{"UnknownSection", R"({"servr": {"cores": 2}})", "servr", "unknown section"},
        BadSettings{"WrongType", R"({"server": {"cores": "eight"}})", "server.cores", "eight"},
        BadSettings{"ImpossibleValue", R"({"server": {"cores": 0}})", "server.cores", "0"},
        BadSettings{"NegativeBudget", R"({"deadline": {"ttft_budget_s": -1}})",
                    "deadline.ttft_budget_s", "-1"},
        BadSettings{"NotAnObject", "[1, 2]", "", "object"},
        BadSettings{"NumberBeyondADoubleNamesItsLineAndKey",
                    "{\"server\": {\"kind\": \"edge\",\n \"cores\": 1e999}}", "",
                    "s.json:2: server.cores: number overflow parsing '1e999'"},
        BadSettings{"PowerPastAnyBound", R"({"server": {"max_power_w": 1e308}})",
                    "server.max_power_w", "must be at most 1e9"},
        BadSettings{"SyntaxError", "{\"server\": {\"cores\": 2,\n}}\n", "", "syntax error"},
        BadSettings{"Empty", "", "", ""},
        // BATCHING.md section 13.1: durations and transfers that the
        // nanosecond clock cannot hold.
        BadSettings{"AutoscaleIntervalBeyondTheClock", autoscaled(R"("interval_s": 1e10)"),
                    "batching.fleet[0].autoscale.interval_s", "must be at most 1e9 s"},
        BadSettings{"AutoscaleStartupBeyondTheClock", autoscaled(R"("startup_s": 1e10)"),
                    "batching.fleet[0].autoscale.startup_s", "must be at most 1e9 s"},
        BadSettings{"AutoscaleDelayBeyondTheClock", autoscaled(R"("scale_down_delay_s": 9e9)"),
                    "batching.fleet[0].autoscale.scale_down_delay_s", "must be at most 1e9 s"},
        BadSettings{"KvLinkLatencyBeyondTheClock", split(R"("kv_link_latency_s": 1e10)"),
                    "batching.kv_link_latency_s", "must be at most 1e9 s"},
        BadSettings{"KvLinkTooSlowForTheLongestPrompt", split(R"("kv_link_gbps": 1e-300)"),
                    "batching.kv_bytes_per_token, batching.kv_link_gbps",
                    "a transfer of max_model_len (131072) tokens would take"},
        BadSettings{"KvBytesTooManyForTheLongestPrompt", split(R"("kv_bytes_per_token": 1e300)"),
                    "batching.kv_bytes_per_token, batching.kv_link_gbps", "more than the 1e9 s"},
        // A class at the most replicas a class may have, of the default
        // blocks: refused by the same memory estimate as --replicas.
        BadSettings{"FleetBeyondTheMachinesMemory",
                    R"({"server": {"kind": "batching"}, "batching": {"fleet": [)"
                    R"({"name": "big", "replicas": 1000000}]}})",
                    "batching.fleet", "its replica slots (big: 1000000 of 31250 KV blocks) need"}),
    [](const auto& info) { return info.param.label; });

// Flags: the flag first, then what is wrong and what would be right.
struct BadFlag {
  std::string label;
  std::vector<std::string> args;
  std::string flag;
  std::string says;
};

void PrintTo(const BadFlag& c, std::ostream* os) {
  *os << c.label;
}

class BadCommandLine : public ::testing::TestWithParam<BadFlag> {};

TEST_P(BadCommandLine, IsRefusedNamingTheFlag) {
  const BadFlag& c = GetParam();
  const fs::path dir = test::fresh_dir(c.label);
  const std::string trace = test::write_file(dir / "t.csv", azure("")).string();
  const fs::path output = dir / "run";
  std::vector<std::string> args = {"run", "--trace", trace, "--output", output.string()};
  args.insert(args.end(), c.args.begin(), c.args.end());
  const std::string line = one_error_line(test::run_cli(args));
  EXPECT_THAT(line, StartsWith(c.flag + ": "));
  EXPECT_THAT(line, HasSubstr(c.says));
  EXPECT_FALSE(fs::exists(output));
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadCommandLine,
    ::testing::Values(
        BadFlag{
            "UnknownFlagSuggestsTheNearest", {"--core", "2"}, "--core", "did you mean --cores?"},
        BadFlag{"PerRequestSaysWhatIsAllowed", {"--per-request", "xml"}, "--per-request", "none"},
        BadFlag{"ModeSaysWhatIsAllowed", {"--mode", "both"}, "--mode", "recorded"},
        BadFlag{"UnitSaysWhatIsAllowed", {"--timestamp-unit", "days"}, "--timestamp-unit", "ms"},
        BadFlag{"CoresNotANumber", {"--cores", "many"}, "--cores", "many"},
        BadFlag{"CoresZero", {"--cores", "0"}, "--cores", "0"},
        BadFlag{"ValueNotUtf8", {"--mode", "\xfe\xff"}, "--mode", "not valid UTF-8"},
        BadFlag{"JoinedValueNotUtf8", {"--arrivals=\xc3\x28"}, "--arrivals", "not valid UTF-8"}),
    [](const auto& info) { return info.param.label; });

// Costs that would carry a run past the nanosecond clock are found as the
// run reaches them: one line naming the knobs they come from (not an internal
// error), status 2 and no run folder.
TEST(BadCosts, PastTheClockNameTheirKnobs) {
  const struct {
    std::vector<std::string> args;
    std::string keys;
    std::string says;
  } cases[] = {
      {{"--mips-per-core", "1e-300"},
       "server.mips_per_core, tokens.mi_per_context_token, tokens.mi_per_generated_token",
       "would run 9.25e+304 s on a core, more than the 1e9 s"},
      {{"--bytes-per-token", "1e300"},
       "tokens.bytes_per_token, network.hops",
       "over hop 'wifi' (1300 Mbit/s), more than the 1e9 s"},
      {{"--time-scale", "1e300", "--mode", "recorded"},
       "run.time_scale",
       "past the 8e9 s (about 253 years) an arrival may reach"},
      {{"--server", "batching", "--step-base-s", "1e300"},
       "batching.step_base_s, batching.step_prefill_token_s, batching.step_prefill_pair_s, "
       "batching.step_decode_token_s, batching.step_decode_context_s, batching.step_weights_s, "
       "batching.step_expert_s",
       "would take 1e+300 s, more than the 1e9 s a duration may last"},
  };
  const fs::path dir = test::fresh_dir("past_the_clock");
  const std::string trace =
      test::write_file(dir / "t.csv", azure("2023-11-16 18:15:50.0000000,10,2\n")).string();
  int i = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.keys);
    const fs::path output = dir / ("run" + std::to_string(i++));
    std::vector<std::string> args = {"run", "--trace", trace, "--output", output.string()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("infersim: " + c.keys + ": "));
    EXPECT_THAT(r.err, HasSubstr(c.says));
    EXPECT_FALSE(fs::exists(output));
  }
}

TEST(Utf8, TellsWellFormedTextFromBytesSettingsJsonCannotHold) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("recorded"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));              // cut short
  EXPECT_FALSE(is_valid_utf8("\xc3\x28"));          // bad continuation
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

// What benchmark clients and spreadsheets write around the data is accepted.
TEST(GoodInput, ByteOrderMarkAndCrlfAreAccepted) {
  const fs::path dir = test::fresh_dir();
  const std::string csv =
      test::write_file(dir / "t.csv",
                       "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                       "2023-11-16 18:15:46.6805900,374,44\r\n2023-11-16 18:15:50,10,2\r\n")
          .string();
  const std::string jsonl =
      test::write_file(dir / "t.jsonl",
                       "\xEF\xBB\xBF{\"timestamp\": 0, \"input_length\": 10, \"output_length\": "
                       "2}\r\n{\"timestamp\": 500, \"input_length\": 3, \"output_length\": 1}\r\n")
          .string();
  for (const std::string& trace : {csv, jsonl}) {
    const fs::path output = dir / ("run-" + fs::path(trace).extension().string().substr(1));
    const auto r = test::run_cli({"run", "--recorded", "--trace", trace, "--output",
                                  output.string(), "--per-request", "csv", "--plots", "none"});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string requests = test::read_file(output / "requests.csv");
    EXPECT_EQ(std::count(requests.begin(), requests.end(), '\n'), 3) << trace;
  }
}

}  // namespace
}  // namespace infersim
