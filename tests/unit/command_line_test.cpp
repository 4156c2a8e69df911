// The command line in-process: flags, errors, and the run folder contract.
#include "cli/command_line.hpp"

#include <cstdio>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kTrace =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2024-01-01 00:00:00.000,1000,10\n"
    "2024-01-01 00:00:00.250,500,0\n"
    "2024-01-01 00:01:30.500,2000,20\n";

class CommandLine : public test::TraceFolder {
 protected:
  CommandLine() : TraceFolder(kTrace) {}
  test::CliResult run(const std::vector<std::string>& extra, const std::string& folder = "run") {
    return run_on_trace({"run", "--recorded"}, folder, extra);
  }
};

TEST_F(CommandLine, VersionNamesTheProgram) {
  const auto r = test::run_cli({"--version"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("infersim 0."));
}

TEST_F(CommandLine, UnknownCommandSuggestsTheNearest) {
  const auto r = test::run_cli({"rnu"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("did you mean run?"));
}

TEST_F(CommandLine, UnknownFlagSuggestsTheNearest) {
  const auto r = run({"--core", "4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--core: unknown option (did you mean --cores?)"));
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST_F(CommandLine, BadValuesSayWhatIsAllowed) {
  EXPECT_THAT(run({"--cores", "0"}).err, HasSubstr("--cores: must be a whole number from 1"));
  EXPECT_THAT(run({"--cores", "two"}).err, HasSubstr("--cores: expected a whole number"));
  EXPECT_THAT(run({"--mips-per-core", "-5"}).err,
              HasSubstr("--mips-per-core: must be greater than 0"));
  EXPECT_THAT(run({"--per-request", "json"}).err, HasSubstr("must be csv or none"));
  EXPECT_THAT(run({"--time-resolution", "soon"}).err,
              HasSubstr("--time-resolution: expected exact"));
  EXPECT_EQ(run({"--cores", "0"}).status, 2);
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST_F(CommandLine, TimeResolutionTakesUnits) {
  EXPECT_EQ(parse_time_resolution("exact", "x"), 0);
  EXPECT_EQ(parse_time_resolution("1s", "x"), 1);
  EXPECT_DOUBLE_EQ(parse_time_resolution("10ms", "x"), 0.01);
  EXPECT_DOUBLE_EQ(parse_time_resolution("250us", "x"), 250e-6);
  EXPECT_DOUBLE_EQ(parse_time_resolution("0.5", "x"), 0.5);
  EXPECT_THROW(parse_time_resolution("-1s", "x"), InputError);
}

TEST_F(CommandLine, PositionalArgumentsAreDevicesDurationSeed) {
  const auto r = run({"3", "60", "7"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings["run"]["devices"], 3);
  EXPECT_EQ(settings["run"]["duration_s"], 60.0);
  EXPECT_EQ(settings["run"]["seed"], 7);
  EXPECT_THAT(r.out, HasSubstr("2 requests scheduled between 0 and 0.25 s, 1 dropped because they "
                               "arrive after the end of the run at 60 s"));
}

TEST_F(CommandLine, WritesTheRunFolderOfTheContract) {
  const auto r = run({});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"settings.json", "summary.json", "summary.csv", "requests.csv"}) {
    EXPECT_TRUE(fs::exists(dir_ / "run" / name)) << name;
  }
  const std::string requests = test::read_file(dir_ / "run" / "requests.csv");
  EXPECT_EQ(std::count(requests.begin(), requests.end(), '\n'), 4);
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings["trace"]["format"], "azure-csv");
  EXPECT_EQ(settings["trace"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(settings["meta"]["program"], "infersim");
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "run" / "summary.json"));
  EXPECT_EQ(summary["requests"], 3);
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\nSuccessful requests: +3\n"));
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex("\nRequests that met their deadline +100.00 % \\(3\\)\n"));
}

TEST_F(CommandLine, PerRequestNoneWritesNoRequestsFile) {
  ASSERT_EQ(run({"--per-request", "none"}).status, 0);
  EXPECT_FALSE(fs::exists(dir_ / "run" / "requests.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "run" / "summary.json"));
}

TEST_F(CommandLine, SettingsFileFeedsBackTheSameRun) {
  ASSERT_EQ(run({"--cores", "1", "--decode-budget", "0.01", "--time-resolution", "1s"}).status, 0);
  const auto again = test::run_cli({"run", "--settings", (dir_ / "run" / "settings.json").string(),
                                    "--output", (dir_ / "again").string()});
  EXPECT_THAT(again.out, ::testing::Not(HasSubstr("synthetic")));  // the mode is a setting too
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(test::read_file(dir_ / "again" / "summary.json"),
            test::read_file(dir_ / "run" / "summary.json"));
  EXPECT_EQ(test::read_file(dir_ / "again" / "requests.csv"),
            test::read_file(dir_ / "run" / "requests.csv"));
  // and the knobs did change the run
  ASSERT_EQ(run({}, "default").status, 0);
  EXPECT_NE(test::read_file(dir_ / "default" / "summary.json"),
            test::read_file(dir_ / "run" / "summary.json"));
}

TEST_F(CommandLine, FlagsOverrideTheSettingsFile) {
  test::write_file(dir_ / "s.json", R"({"server": {"cores": 3}, "run": {"devices": 5}})");
  ASSERT_EQ(run({"--settings", (dir_ / "s.json").string(), "--cores", "2"}).status, 0);
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings["server"]["cores"], 2);
  EXPECT_EQ(settings["run"]["devices"], 5);
}

TEST_F(CommandLine, PinnedDigestRefusesAnotherTrace) {
  const nlohmann::json pinned = {{"trace", {{"path", trace_}, {"sha256", std::string(64, '0')}}}};
  test::write_file(dir_ / "s.json", pinned.dump());
  const auto r = test::run_cli(
      {"run", "--settings", (dir_ / "s.json").string(), "--output", (dir_ / "run").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("trace.sha256"));
  EXPECT_FALSE(fs::exists(dir_ / "run"));
  // --trace lifts the pin
  const auto lifted = test::run_cli({"run", "--settings", (dir_ / "s.json").string(), "--trace",
                                     trace_, "--output", (dir_ / "run").string()});
  EXPECT_EQ(lifted.status, 0) << lifted.err;
}

TEST_F(CommandLine, ExistingRunFolderIsRefusedAndUntouchedWithoutForce) {
  ASSERT_EQ(run({}).status, 0);
  const std::string before = test::read_file(dir_ / "run" / "summary.json");
  const auto refused = run({"--cores", "1"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  EXPECT_EQ(test::read_file(dir_ / "run" / "summary.json"), before);
  ASSERT_EQ(run({"--cores", "1", "--decode-budget", "0", "--force"}).status, 0);
  EXPECT_NE(test::read_file(dir_ / "run" / "summary.json"), before);
}

TEST_F(CommandLine, BadTraceLeavesNoRunFolder) {
  test::write_file(dir_ / "bad.csv",
                   "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-13-01 00:00:00,1,1\n");
  const auto r = test::run_cli(
      {"run", "--trace", (dir_ / "bad.csv").string(), "--output", (dir_ / "run").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.csv:2: TIMESTAMP: month 13 does not exist"));
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST_F(CommandLine, CompareIsTheDefaultAndWritesBothModes) {
  const auto r = test::run_cli({"run", "--trace", trace_, "--output", (dir_ / "cmp").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name :
       {"settings.json", "summary.json", "summary.csv", "recorded/requests.csv",
        "recorded/summary.json", "synthetic/requests.csv", "synthetic/summary.json"}) {
    EXPECT_TRUE(fs::exists(dir_ / "cmp" / name)) << name;
  }
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "cmp" / "summary.json"));
  EXPECT_EQ(summary["recorded"]["requests"], 3);
  EXPECT_EQ(summary["synthetic"],
            nlohmann::json::parse(test::read_file(dir_ / "cmp" / "synthetic" / "summary.json")));
  const std::string csv = test::read_file(dir_ / "cmp" / "summary.csv");
  EXPECT_THAT(csv, HasSubstr("\nrecorded,3,"));
  EXPECT_THAT(csv, HasSubstr("\nsynthetic,"));
  EXPECT_THAT(r.out, HasSubstr("Metric"));
  EXPECT_THAT(r.out, HasSubstr("Recorded/synthetic"));
  EXPECT_THAT(r.out, HasSubstr("Synthetic poisson: "));
}

TEST_F(CommandLine, SyntheticModeAloneWritesAFlatFolder) {
  const auto r = test::run_cli(
      {"run", "--synthetic=empirical", "--trace", trace_, "--output", (dir_ / "syn").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "syn" / "requests.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "syn" / "recorded"));
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "syn" / "settings.json"));
  EXPECT_EQ(settings["run"]["mode"], "synthetic");
  EXPECT_EQ(settings["synthetic"]["sizes"], "empirical");
  EXPECT_THAT(test::read_file(dir_ / "syn" / "summary.csv"), HasSubstr("\nsynthetic,"));
}

TEST_F(CommandLine, ReplicationsAddConfidenceIntervalsAndAFileOfSeeds) {
  const auto r = test::run_cli({"run", "--synthetic", "--replications", "5", "-j", "2", "--trace",
                                trace_, "--output", (dir_ / "rep").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(test::read_file(dir_ / "rep" / "summary.json"));
  EXPECT_EQ(summary["replications"], 5);
  EXPECT_TRUE(summary.contains("avg_wait_s_ci95"));
  const std::string seeds = test::read_file(dir_ / "rep" / "replications.csv");
  EXPECT_EQ(std::count(seeds.begin(), seeds.end(), '\n'), 6);
  EXPECT_THAT(seeds, HasSubstr("\n42,"));
  EXPECT_THAT(seeds, HasSubstr("\n46,"));
}

TEST_F(CommandLine, ModeFlagsConflict) {
  const auto r = test::run_cli({"run", "--recorded", "--compare", "--trace", trace_});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("conflicts with"));
}

TEST_F(CommandLine, BurstinessNeedsGammaArrivals) {
  const auto r = run({"--burstiness", "0.5"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--arrivals gamma"));
  EXPECT_EQ(run({"--burstiness", "0.5", "--arrivals", "gamma"}).status, 0);
}

TEST_F(CommandLine, SyntheticNeedsATraceWithAMeanRate) {
  test::write_file(dir_ / "instant.csv",
                   "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-01-01 00:00:00,1,1\n"
                   "2024-01-01 00:00:00,2,2\n");
  const auto r = test::run_cli(
      {"run", "--trace", (dir_ / "instant.csv").string(), "--output", (dir_ / "run").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("same instant"));
  EXPECT_FALSE(fs::exists(dir_ / "run"));
  const auto recorded =
      test::run_cli({"run", "--recorded", "--trace", (dir_ / "instant.csv").string(), "--output",
                     (dir_ / "run").string()});
  EXPECT_EQ(recorded.status, 0) << recorded.err;
}

TEST_F(CommandLine, RunHelpListsEveryKnob) {
  const auto r = test::run_cli({"run", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* flag :
       {"--trace", "--settings", "--devices", "--duration", "--seed", "--time-resolution",
        "--time-scale", "--bytes-per-token", "--mi-per-context-token", "--mi-per-generated-token",
        "--ttft-budget", "--decode-budget", "--cores", "--mips-per-core", "--idle-power",
        "--max-power", "--output", "--force", "--per-request"}) {
    EXPECT_THAT(r.out, HasSubstr(flag));
  }
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

class TraceFlags : public CommandLine {};

TEST_F(TraceFlags, SpeedupIsTheInverseTimeScaleAndConflictsWithIt) {
  ASSERT_EQ(run({"--speedup", "4"}).status, 0);
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings["run"]["time_scale"], 0.25);
  const auto r = run({"--speedup", "2", "--time-scale", "0.5"}, "other");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--speedup: conflicts with --time-scale"));
}

TEST_F(TraceFlags, TheRunSaysAndRecordsTheFormatAndUnitItRead) {
  const auto r = run({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(": azure-csv, calendar timestamps, 3 requests."));
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings["trace"]["format"], "azure-csv");
  EXPECT_EQ(settings["trace"]["timestamp_unit"], "datetime");
}

TEST_F(TraceFlags, GenericColumnsFiltersAndWindowFromTheCommandLine) {
  test::write_file(dir_ / "mine.csv",
                   "ms,prompt,completion,tenant\n0,10,2,a\n1500,20,3,b\n2500,30,4,a\n9000,5,1,a\n");
  const auto r = test::run_cli(
      {"run", "--recorded", "--trace", (dir_ / "mine.csv").string(), "--timestamp-column", "ms",
       "--input-column", "prompt", "--output-column", "completion", "--timestamp-unit", "ms",
       "--filter", "tenant=a", "--end-offset", "3", "--output", (dir_ / "g").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("csv, timestamps in ms, 3 requests (1 rows left out by --filter)"));
  EXPECT_THAT(r.out, HasSubstr("2 requests scheduled between 0 and 2.5 s"));
  EXPECT_THAT(r.out, HasSubstr("1 outside the replay window"));
  const std::string requests = test::read_file(dir_ / "g" / "requests.csv");
  EXPECT_THAT(requests, HasSubstr("\n1,1,2.500000000,30,4,"));
}

// The replay window's flags through `run`, down to the arrivals written: a
// hand-made trace at offsets 0, 2, 10, 11, 30 and 31.5 s (gaps 2, 8, 1, 19
// and 1.5 s).
class ReplayWindowFlags : public CommandLine {
 protected:
  void SetUp() override {
    CommandLine::SetUp();
    trace_ = test::write_file(dir_ / "window.csv",
                              "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                              "2024-01-01 00:00:00.000,100,1\n"
                              "2024-01-01 00:00:02.000,101,1\n"
                              "2024-01-01 00:00:10.000,102,1\n"
                              "2024-01-01 00:00:11.000,103,1\n"
                              "2024-01-01 00:00:30.000,104,1\n"
                              "2024-01-01 00:00:31.500,105,1\n")
                 .string();
  }
  // A recorded run of the window trace, without plots.
  test::CliResult replay(std::vector<std::string> flags, const std::string& folder = "run") {
    flags.insert(flags.end(), {"--plots", "none"});
    return run(flags, folder);
  }
  // The run's requests: (arrival in ns, context tokens, which names the record).
  std::vector<std::pair<std::int64_t, std::string>> arrivals(const std::string& folder) {
    std::vector<std::pair<std::int64_t, std::string>> out;
    for (const auto& row : test::read_csv(dir_ / folder / "requests.csv"))
      out.emplace_back(test::ns_of(row.at("arrival_s")), row.at("context_tokens"));
    return out;
  }
  static constexpr std::int64_t kS = 1'000'000'000;
};

TEST_F(ReplayWindowFlags, StartOffsetKeepsTheLaterRecordsCountedFromIt) {
  const auto r = replay({"--start-offset", "5"});
  ASSERT_EQ(r.status, 0) << r.err;
  // 10, 11, 30 and 31.5 s are kept; 0 and 2 s are before the window.
  EXPECT_EQ(arrivals("run"),
            (std::vector<std::pair<std::int64_t, std::string>>{
                {5 * kS, "102"}, {6 * kS, "103"}, {25 * kS, "104"}, {26'500'000'000, "105"}}));
  EXPECT_THAT(r.out, HasSubstr("2 outside the replay window"));
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings["run"]["start_offset_s"], 5.0);
}

TEST_F(ReplayWindowFlags, MaxIdleGapCutsEachLongGapAndShiftsWhatFollows) {
  const auto r = replay({"--max-idle-gap", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  // gaps 2, 8, 1, 19, 1.5 s become 2, 3, 1, 3, 1.5 s
  EXPECT_EQ(arrivals("run"),
            (std::vector<std::pair<std::int64_t, std::string>>{{0, "100"},
                                                               {2 * kS, "101"},
                                                               {5 * kS, "102"},
                                                               {6 * kS, "103"},
                                                               {9 * kS, "104"},
                                                               {10'500'000'000, "105"}}));
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(settings["run"]["max_idle_gap_s"], 3.0);
}

TEST_F(ReplayWindowFlags, TheGapCapWorksOnTheWindowNotOnItsLeadIn) {
  const auto r = replay({"--start-offset", "5", "--max-idle-gap", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  // window 10, 11, 30, 31.5 s counted from 5: 5, 6, 25, 26.5; the 5 s from the
  // window's start to its first record is no gap between records and stays;
  // the gap of 19 s becomes 3: 5, 6, 9, 10.5.
  EXPECT_EQ(arrivals("run"),
            (std::vector<std::pair<std::int64_t, std::string>>{
                {5 * kS, "102"}, {6 * kS, "103"}, {9 * kS, "104"}, {10'500'000'000, "105"}}));
  // The same knobs from a settings file.
  test::write_file(dir_ / "s.json", R"({"run": {"start_offset_s": 5, "max_idle_gap_s": 3}})");
  ASSERT_EQ(replay({"--settings", (dir_ / "s.json").string()}, "file").status, 0);
  EXPECT_EQ(arrivals("file"), arrivals("run"));
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

// Two bursts of eleven requests, ten seconds apart, the second 2900 s after the
// first: a replay window or a gap cap changes the replayed length and rate.
// Request i of the first burst arrives at 10 i s with 100 context and 10
// generated tokens; of the second, at 3000 + 10 i s with 300 and 30.
std::string two_bursts(const std::vector<std::pair<int, int>>& offsets_and_scale) {
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (const auto& [offset_s, scale] : offsets_and_scale) {
    char line[64];
    std::snprintf(line, sizeof(line), "2024-01-01 %02d:%02d:%02d,%d,%d\n", offset_s / 3600,
                  offset_s / 60 % 60, offset_s % 60, 100 * scale, 10 * scale);
    csv += line;
  }
  return csv;
}

class SyntheticFromTheReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir();
    std::vector<std::pair<int, int>> both;
    for (int i = 0; i <= 10; ++i)
      both.emplace_back(10 * i, 1);
    for (int i = 0; i <= 10; ++i)
      both.emplace_back(3000 + 10 * i, 3);
    trace_ = test::write_file(dir_ / "bursts.csv", two_bursts(both)).string();
  }
  // `run --synthetic` on `trace` with `flags`: the console and the summary.
  std::pair<test::CliResult, nlohmann::json> synthetic(const std::string& trace,
                                                       std::vector<std::string> flags,
                                                       const std::string& mode = "--compare") {
    const std::string folder = (dir_ / ("run" + std::to_string(++runs_))).string();
    std::vector<std::string> args = {"run",     mode,   "--trace",  trace,
                                     "--plots", "none", "--output", folder};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    if (r.status != 0) return {r, {}};
    auto summary = nlohmann::json::parse(test::read_file(fs::path(folder) / "summary.json"));
    return {r, mode == "--compare" ? summary["synthetic"] : summary};
  }
  fs::path dir_;
  std::string trace_;
  int runs_ = 0;
};

// The synthetic requests drawn from a trace of exactly the replayed requests
// (no window, no cap): what the windowed run must draw, seed for seed.
TEST_F(SyntheticFromTheReplay, EndOffsetGivesTheWindowsLengthRateAndSizes) {
  std::vector<std::pair<int, int>> first;
  for (int i = 0; i <= 10; ++i)
    first.emplace_back(10 * i, 1);
  const std::string cut = test::write_file(dir_ / "first.csv", two_bursts(first)).string();
  const auto [reference, reference_summary] = synthetic(cut, {});
  const auto [r, summary] = synthetic(trace_, {"--end-offset", "100"});
  // 11 requests over 100 s: 0.11/s; the last at 100 s, so T = 120 s.
  EXPECT_THAT(r.out, HasSubstr("Trace replay: 11 requests scheduled between 0 and 100 s, 0 "
                               "dropped because they arrive after the end of the run at 120 s"));
  const std::uint64_t n = reference_summary["requests"].get<std::uint64_t>();
  EXPECT_THAT(r.out, HasSubstr("Synthetic poisson: " + std::to_string(n) +
                               " requests drawn at the trace's mean rate of 0.1100/s until 120 s, "
                               "mean sizes of 100.000 context and 10.000 generated tokens, "
                               "seed 42."));
  EXPECT_EQ(summary["run_length_s"], 120);
  EXPECT_EQ(summary["requests"], n);
  EXPECT_EQ(summary, reference_summary);
  // About 0.11/s x 120 s = 13.2 of them.
  EXPECT_GE(n, 4u);
  EXPECT_LE(n, 30u);
}

TEST_F(SyntheticFromTheReplay, StartOffsetSpeedupAndResolutionApplyAsToTheRecordedRun) {
  std::vector<std::pair<int, int>> second;
  for (int i = 0; i <= 10; ++i)
    second.emplace_back(10 * i, 3);
  const std::string cut = test::write_file(dir_ / "second.csv", two_bursts(second)).string();
  const std::vector<std::string> clock = {"--speedup", "2", "--time-resolution", "1s"};
  const auto [reference, reference_summary] = synthetic(cut, clock, "--synthetic");
  std::vector<std::string> flags = {"--start-offset", "3000"};
  flags.insert(flags.end(), clock.begin(), clock.end());
  const auto [r, summary] = synthetic(trace_, flags, "--synthetic");
  // 11 requests over 100 s of trace time, replayed twice as fast: 0.22/s over
  // 50 s, the last at 50 s, so T = 60 s.
  EXPECT_THAT(r.out, HasSubstr("requests drawn at the trace's mean rate of 0.2200/s until 60 s, "
                               "mean sizes of 300.000 context and 30.000 generated tokens"));
  EXPECT_EQ(summary["run_length_s"], 60);
  EXPECT_EQ(summary, reference_summary);
}

TEST_F(SyntheticFromTheReplay, GapCapGivesTheCappedLengthAndRate) {
  // --max-idle-gap 10 cuts the 2900 s gap to 10 s: 22 requests at 0, 10, ..., 210 s.
  std::vector<std::pair<int, int>> capped;
  for (int i = 0; i <= 21; ++i)
    capped.emplace_back(10 * i, i <= 10 ? 1 : 3);
  const std::string cut = test::write_file(dir_ / "capped.csv", two_bursts(capped)).string();
  const auto [reference, reference_summary] = synthetic(cut, {});
  const auto [r, summary] = synthetic(trace_, {"--max-idle-gap", "10"});
  // 22 / 210 s = 0.10476/s; the last at 210 s, so T = 240 s; sizes 200 and 20.
  const std::uint64_t n = reference_summary["requests"].get<std::uint64_t>();
  EXPECT_THAT(r.out, HasSubstr("Synthetic poisson: " + std::to_string(n) +
                               " requests drawn at the trace's mean rate of 0.1048/s until 240 s, "
                               "mean sizes of 200.000 context and 20.000 generated tokens"));
  EXPECT_EQ(summary["run_length_s"], 240);
  EXPECT_EQ(summary, reference_summary);
}

TEST_F(SyntheticFromTheReplay, SweepAndCapacityDrawTheSameRequests) {
  std::vector<std::pair<int, int>> first;
  for (int i = 0; i <= 10; ++i)
    first.emplace_back(10 * i, 1);
  const std::string cut = test::write_file(dir_ / "first.csv", two_bursts(first)).string();
  const auto [reference, reference_summary] = synthetic(cut, {}, "--synthetic");
  const std::string n = std::to_string(reference_summary["requests"].get<std::uint64_t>());

  const auto sweep =
      test::run_cli({"sweep", "--vary", "cores=1,2", "--modes", "synthetic", "--end-offset", "100",
                     "--trace", trace_, "--output", (dir_ / "sweep").string()});
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const std::string csv = test::read_file(dir_ / "sweep" / "sweep.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  const auto column = [&](const std::string& key) {
    const std::string before = header.substr(0, header.find("," + key + ","));
    return std::count(before.begin(), before.end(), ',') + 1;
  };
  std::istringstream rows(csv.substr(csv.find('\n') + 1));
  int count = 0;
  for (std::string row; std::getline(rows, row); ++count) {
    std::vector<std::string> fields;
    std::istringstream in(row);
    for (std::string f; std::getline(in, f, ',');)
      fields.push_back(f);
    EXPECT_EQ(fields.at(column("requests")), n) << row;
    EXPECT_EQ(fields.at(column("run_length_s")), "120") << row;
  }
  EXPECT_EQ(count, 2);

  // The target holds at every core count exactly when the draws are the
  // window's: the minimum already meets it.
  const auto capacity =
      test::run_cli({"capacity", "--vary", "cores", "--min", "1", "--max", "2", "--target",
                     "requests==" + n, "--modes", "synthetic", "--end-offset", "100", "--trace",
                     trace_, "--output", (dir_ / "capacity").string()});
  ASSERT_EQ(capacity.status, 0) << capacity.err;
  EXPECT_THAT(capacity.out, HasSubstr("synthetic cores=1  requests=" + n));
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

class Conventions : public CommandLine {};

TEST_F(Conventions, ReplicationsAreRefusedInTheRecordedMode) {
  const auto r = run({"--replications", "3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("synthetic.replications: applies to the synthetic mode only"));
  EXPECT_FALSE(fs::exists(dir_ / "run"));
  EXPECT_EQ(run({"--replications", "1"}, "one").status, 0);
  const auto compare = test::run_cli(
      {"run", "--replications", "2", "--trace", trace_, "--output", (dir_ / "compare").string()});
  EXPECT_EQ(compare.status, 0) << compare.err;
}

TEST_F(Conventions, WindowFlagsTakeSecondsOrAUnit) {
  // 0.250 s and 90.5 s: an end at 1 s keeps the first two of the three requests.
  for (const std::string end : {"1", "1s", "1000ms", "1000000us", "1000000000ns"}) {
    const auto r =
        run({"--end-offset", end, "--start-offset", "0ms", "--max-idle-gap", "0.5s"}, "end-" + end);
    ASSERT_EQ(r.status, 0) << end << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("2 requests scheduled between 0 and 0.25 s")) << end;
    const auto settings =
        nlohmann::json::parse(test::read_file(dir_ / ("end-" + end) / "settings.json"));
    EXPECT_EQ(settings["run"]["end_offset_s"], 1.0) << end;
    EXPECT_EQ(settings["run"]["start_offset_s"], 0.0) << end;
    EXPECT_EQ(settings["run"]["max_idle_gap_s"], 0.5) << end;
  }
  const auto bad = run({"--end-offset", "10min"}, "bad");
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, HasSubstr("--end-offset: expected seconds or a duration such as 600s or "
                                 "600000ms, got '10min'"));
  const auto help = test::run_cli({"run", "--help"});
  EXPECT_THAT(help.out, HasSubstr("a bare number is seconds"));
}

TEST_F(Conventions, NameEndsTheDefaultFolderName) {
  const test::InFolder here(dir_);
  const auto r = test::run_cli({"run", "--recorded", "--trace", trace_, "--name", "baseline-2x"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<fs::path> made;
  for (const auto& entry : fs::directory_iterator(dir_ / "output"))
    made.push_back(entry.path().filename());
  ASSERT_EQ(made.size(), 1u);
  EXPECT_THAT(made[0].string(), ::testing::MatchesRegex("[0-9]{8}-[0-9]{6}-recorded-baseline-2x"));
  EXPECT_THAT(r.out, HasSubstr("Run folder: output/" + made[0].string() + "\n"));
  EXPECT_TRUE(fs::exists(dir_ / "output" / made[0] / "summary.json"));

  for (const std::string name : {"a/b", "", "..", ".hidden", "tab\there"}) {
    const auto refused = test::run_cli({"run", "--recorded", "--trace", trace_, "--name", name});
    EXPECT_EQ(refused.status, 2) << name;
    EXPECT_THAT(refused.err, HasSubstr("--name: ")) << name;
  }
  const auto both = test::run_cli(
      {"run", "--recorded", "--trace", trace_, "--name", "x", "--output", "elsewhere"});
  EXPECT_EQ(both.status, 2);
  EXPECT_THAT(both.err, HasSubstr("--name: conflicts with --output"));
  const auto sweep = test::run_cli(
      {"sweep", "--vary", "cores=1,2", "--modes", "recorded", "--trace", trace_, "--name", "grid"});
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  std::size_t grids = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "output"))
    grids += entry.path().filename().string().ends_with("-sweep-grid");
  EXPECT_EQ(grids, 1u);
}

// A derived preset used with nothing measured says, on the console, on the
// page and in settings.json, how far it may be and from what evidence: for
// the RTX 4090 the run held out of every fit (settings/hardware/held_out.json).
TEST_F(CommandLine, ADerivedPresetSaysItsExpectedError) {
  const test::CliResult r = run({"--preset", "rtx-4090-llama-3.1-8b", "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json held = nlohmann::json::parse(
      test::read_file(test::source_dir() / "settings" / "hardware" / "held_out.json"));
  ASSERT_EQ(held["runs"].size(), 1u);
  char ttft[16];
  std::snprintf(ttft, sizeof(ttft), "%.0f %%", held["runs"][0]["ttft"].get<double>());
  EXPECT_THAT(r.out, HasSubstr("Preset rtx-4090-llama-3.1-8b: derived from a datasheet"));
  EXPECT_THAT(r.out, HasSubstr(std::string("off by about ") + ttft + " (TTFT)"));
  EXPECT_THAT(r.out, HasSubstr("the mean |error| of " + held["runs"][0]["run"].get<std::string>() +
                               ", a run of its GPU and model family, held out of every fit"));
  const std::string page = test::read_file(dir_ / "run" / "report.html");
  EXPECT_THAT(page, HasSubstr("<p class=\"warn\" data-preset=\"rtx-4090-llama-3.1-8b\">Preset "
                              "rtx-4090-llama-3.1-8b: derived"));
  const nlohmann::json settings =
      nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  const nlohmann::json& e = settings["meta"]["presets_expected_error"]["rtx-4090-llama-3.1-8b"];
  EXPECT_EQ(e["pct"]["ttft"], held["runs"][0]["ttft"]);
  EXPECT_THAT(e["from"].get<std::string>(), HasSubstr("held out of every fit"));
  // Given back, the written settings say it again.
  const test::CliResult again =
      test::run_cli({"run", "--settings", (dir_ / "run" / "settings.json").string(), "--plots",
                     "none", "--output", (dir_ / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("Preset rtx-4090-llama-3.1-8b: derived from a datasheet"));
  // Without a preset, no such line.
  const test::CliResult plain = run({"--plots", "none"}, "plain");
  EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("Preset ")));
}

// Batching knobs given to the edge server would be dropped without a word (a
// sweep of identical rows, a capacity answer about nothing): refused, naming
// the flag and --server batching; a sweep over both servers may vary them.
TEST_F(CommandLine, BatchingKnobsWithoutTheBatchingServerAreRefused) {
  const std::string why =
      "applies to the batching server only, and this run's server is edge: add --server batching";
  EXPECT_EQ(test::one_error_line(run({"--replicas", "8", "--router", "prefix"})),
            "--replicas: " + why);
  EXPECT_EQ(test::one_error_line(run({"--kv-blocks", "100"})), "--kv-blocks: " + why);
  EXPECT_EQ(test::one_error_line(run_on_trace({"sweep", "--vary", "replicas=1,2"}, "sweep", {})),
            "--vary replicas: " + why);
  EXPECT_EQ(test::one_error_line(run_on_trace(
                {"capacity", "--vary", "replicas", "--target", "success_rate>=0.99"}, "cap", {})),
            "--vary replicas: " + why);
  const std::string file =
      test::write_file(dir_ / "edge.json", "{\"batching\": {\"replicas\": 4}}").string();
  EXPECT_EQ(test::one_error_line(run({"--settings", file})),
            file +
                ": batching.replicas: applies to the batching server only, and server.kind is "
                "edge (set by the default): set server.kind to batching");
  // Allowed: the batching server, and a sweep over both servers.
  EXPECT_EQ(run({"--server", "batching", "--replicas", "2", "--plots", "none"}, "ok").status, 0);
  EXPECT_EQ(run_on_trace({"sweep", "--vary", "server=edge,batching", "--vary", "replicas=1,2"},
                         "both", {"--plots", "none"})
                .status,
            0);
}

// A million replicas would allocate their block tables for seconds and end
// in bad_alloc: refused at once, naming both knobs and the memory.
TEST_F(CommandLine, ReplicasBeyondTheMachinesMemoryAreRefusedAtOnce) {
  // 100,000 x 60,000,001 blocks of 20 bytes: 111,759 GiB, beyond any machine.
  const std::string line = test::one_error_line(
      run({"--server", "batching", "--replicas", "100000", "--kv-blocks", "60000000"}));
  EXPECT_THAT(line, HasSubstr("batching.replicas (--replicas), batching.kv_blocks (--kv-blocks): "
                              "100000 replicas of 60000000 KV blocks need 134110.8 GiB for their "
                              "block tables alone, more than this machine's"));
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

// A cache of one block refuses nearly every request: the run still succeeds,
// but the console and the page say so and name the limit.
TEST_F(CommandLine, MostRequestsRefusedIsSaidWithTheLimit) {
  const test::CliResult r = run({"--server", "batching", "--kv-blocks", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string limit =
      "were refused on arrival: a prompt and output longer than max_model_len 16 tokens "
      "(min(131072, kv_blocks 1 x block_tokens 16): --kv-blocks, --block-tokens or "
      "--max-model-len)";
  EXPECT_THAT(r.out, HasSubstr("warning: recorded trace: 3 of the 3 requests (100.0 %) " + limit));
  EXPECT_THAT(test::read_file(dir_ / "run" / "report.html"),
              HasSubstr("<b>Most requests refused.</b> recorded trace: 3 of the 3 requests"));
  // Half or fewer refused: no warning.
  const test::CliResult fine = run({"--server", "batching"}, "fine");
  EXPECT_THAT(fine.out, ::testing::Not(HasSubstr("refused on arrival")));
}

// The messages a user meets when a value is off: the range a count takes, the
// word meant, a flag given twice said as such (the positional note only where
// a positional argument sets the same knob), an aiperf record with no instant.
TEST_F(CommandLine, MessagesSayWhatIsMeant) {
  const struct {
    std::vector<std::string> args;
    std::string error;
  } cases[] = {
      {{"--server", "batching", "--replicas", "-2"},
       "--replicas: must be a whole number from 1 to 1000000, got -2"},
      {{"--server", "batching", "--router", "prefx"},
       "--router: must be round-robin, least-requests, kv-aware, prefix, vllm-dp, scorer or "
       "dynamo, got \"prefx\" (did you mean prefix?)"},
      {{"--server", "batching", "--router-refresh-s", "-1"},
       "--router-refresh-s: must be at least 0.0, got -1.0"},
      {{"--server", "batching", "--scorer-weights", "queue:2,prefx:3"},
       "--scorer-weights: 'prefx' is not a scorer: queue, running, kv, prefix or predicted_ttft "
       "(did you mean prefix?)"},
      {{"--server", "batching", "--scorer-weights", "queue:-2"},
       "--scorer-weights.queue: must be at least 0.0, got -2.0"},
      {{"--server", "batching", "--scorer-weights", "queue"},
       "--scorer-weights: expected NAME:NUMBER such as prefix:3, got 'queue'"},
      {{"--server", "batching", "--replay-turns", "sometimes"},
       "--replay-turns: expected on or off, got 'sometimes'"},
      {{"--server", "kbatching"},
       "--server: must be edge or batching, got \"kbatching\" (did you "
       "mean batching?)"},
      {{"--server", "batching", "--replicas", "2", "--replicas", "4"},
       "--replicas: given more than once; give it once"},
      {{"--devices", "3", "--devices", "4"},
       "--devices: given more than once; give it once (a positional argument sets it too)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    EXPECT_EQ(test::one_error_line(run(c.args)), c.error);
  }
  const std::string aiperf =
      test::write_file(
          dir_ / "aiperf.jsonl",
          R"({"metadata":{"request_start_ns":0},"metrics":{"input_sequence_length":{"value":5,)"
          R"("unit":"tokens"},"output_sequence_length":{"value":3,"unit":"tokens"}}})"
          "\n")
          .string();
  EXPECT_EQ(test::one_error_line(test::run_cli({"run", "--trace", aiperf})),
            aiperf +
                ":1: metadata.request_start_ns: must be nanoseconds since the epoch "
                "(aiperf's wall clock), got 0");
}

// Compare mode runs the recorded requests at the synthetic instants too, and
// says what the gap is made of, on the console, in summary.json and on the
// page; the seed's table keeps its two columns.
TEST_F(CommandLine, CompareSplitsTheGapIntoTimingAndSizeMix) {
  const test::CliResult r = run_on_trace({"run"}, "cmp", {"--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Retimed poisson: the 3 recorded requests themselves"));
  EXPECT_THAT(r.out, HasSubstr("What the gap is made of: retimed is the recorded requests"));
  EXPECT_TRUE(fs::exists(dir_ / "cmp" / "retimed" / "summary.json"));
  const nlohmann::json summary =
      nlohmann::json::parse(test::read_file(dir_ / "cmp" / "summary.json"));
  EXPECT_TRUE(summary.contains("retimed"));
  EXPECT_TRUE(summary["attribution"].contains("ttft_p99_s"));
  EXPECT_EQ(summary["retimed"]["requests"], 3);
  EXPECT_THAT(test::read_file(dir_ / "cmp" / "report.html"),
              HasSubstr("<h3>What the gap is made of</h3>"));
  // With the recorded sizes as the synthetic mode's, there is nothing between.
  const test::CliResult same =
      run_on_trace({"run"}, "same", {"--plots", "none", "--sizes", "recorded"});
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_FALSE(fs::exists(dir_ / "same" / "retimed"));
}

}  // namespace
}  // namespace infersim
