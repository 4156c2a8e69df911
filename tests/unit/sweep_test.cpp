// Sweeps: the grid, ranges, shards, the rows of sweep.csv, the command's
// checks, and merging shards back into the whole sweep's file.
#include "scenario/sweep.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test::fields_of;
using test::lines_of;

Sweep two_axes() {
  Sweep sweep;
  sweep.axes.push_back({"cores", "server.cores", {1, 2}});
  sweep.axes.push_back({"decode-budget", "deadline.decode_budget_s", {0.1, 0.5, 1.0}});
  return sweep;
}

TEST(Sweep, GridIsTheCartesianProductWithTheFirstAxisOutermost) {
  const Sweep sweep = two_axes();
  EXPECT_EQ(sweep.point_count(), 6u);
  EXPECT_THAT(sweep.coordinates(0), ElementsAre(0, 0));
  EXPECT_THAT(sweep.coordinates(1), ElementsAre(0, 1));
  EXPECT_THAT(sweep.coordinates(3), ElementsAre(1, 0));
  EXPECT_THAT(sweep.coordinates(5), ElementsAre(1, 2));
  const Settings s = sweep.point_settings(Settings{}, 4);
  EXPECT_EQ(s.cores, 2u);
  EXPECT_EQ(s.decode_budget_s, 0.5);
  EXPECT_EQ(s.mode, "compare");
  Sweep recorded = sweep;
  recorded.modes = {"recorded"};
  EXPECT_EQ(recorded.point_settings(Settings{}, 0).mode, "recorded");
}

TEST(Sweep, RangeIncludesStopWithoutFloatingDrift) {
  const std::vector<double> tenths = range_values(0, 1, 0.1, "x");
  ASSERT_EQ(tenths.size(), 11u);
  EXPECT_EQ(tenths[3], 0.3);  // not 0.30000000000000004
  EXPECT_EQ(tenths[7], 0.7);
  EXPECT_EQ(tenths.back(), 1.0);
  EXPECT_EQ(range_values(1, 100, 1, "x").size(), 100u);
  EXPECT_THAT(range_values(0, 0.95, 0.1, "x").back(), 0.9);
  EXPECT_THAT(range_values(0.5, 2, 0.5, "x"), ElementsAre(0.5, 1, 1.5, 2));
  EXPECT_THAT(range_values(3, 3, 1, "x"), ElementsAre(3));
  EXPECT_THAT(range_values(0.5, 10, 1, "x").back(), 9.5);
}

TEST(Sweep, RangeRefusesANonPositiveStepAndAStopBelowStart) {
  try {
    range_values(1, 4, 0, "--vary cores");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--vary cores: STEP must be greater than 0"));
  }
  EXPECT_THROW(range_values(1, 4, -1, "x"), InputError);
  EXPECT_THROW(range_values(4, 1, 1, "x"), InputError);
  EXPECT_THROW(range_values(0, 1e7, 1, "x"), InputError);  // more than a million values
}

TEST(Sweep, ShardsAreInterleavedSlices) {
  EXPECT_THAT(shard_points(10, {2, 3}), ElementsAre(1, 4, 7));
  EXPECT_THAT(shard_points(10, {3, 3}), ElementsAre(2, 5, 8));
  EXPECT_THAT(shard_points(2, {3, 4}), ElementsAre());
  const SweepShard shard = parse_shard("2/8");
  EXPECT_EQ(shard.index, 2u);
  EXPECT_EQ(shard.count, 8u);
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "2/3x", "/3", "1/0", ""}) {
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
  }
}

TEST(Sweep, ValuesShowAsSummaryCsvShowsNumbers) {
  EXPECT_EQ(sweep_value_text(nlohmann::json(8u)), "8");
  EXPECT_EQ(sweep_value_text(nlohmann::json(0.5)), "0.5");
  EXPECT_EQ(sweep_value_text(nlohmann::json(2000.0)), "2000");
}

TEST(Sweep, CheckRefusesWhatCannotRun) {
  Sweep twice = two_axes();
  twice.axes.push_back({"cores", "server.cores", {4}});
  EXPECT_THROW(check_sweep(twice, Settings{}), InputError);
  Sweep zero = two_axes();
  zero.axes[0].values = {1, 0};
  try {
    check_sweep(zero, Settings{});
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--cores: must be a whole number from 1"));
  }
  Sweep power;
  power.axes.push_back({"max-power", "server.max_power_w", {800, 100}});  // below idle 420
  EXPECT_THROW(check_sweep(power, Settings{}), InputError);
  EXPECT_THROW(check_sweep(Sweep{}, Settings{}), InputError);
}

TEST(Sweep, HeaderAddsConfidenceColumnsOnlyForReplicatedSynthetic) {
  Sweep sweep;
  sweep.axes.push_back({"cores", "server.cores", {1}});
  const std::string plain = sweep_csv_header(sweep, Settings{});
  EXPECT_THAT(plain, testing::StartsWith("mode,cores,requests,dropped,"));
  EXPECT_THAT(plain, testing::Not(HasSubstr("_ci95")));
  Sweep replicated = sweep;
  replicated.axes.push_back({"replications", "synthetic.replications", {1, 3}});
  EXPECT_THAT(sweep_csv_header(replicated, Settings{}), HasSubstr(",requests_ci95,"));
  replicated.modes = {"recorded"};
  EXPECT_THAT(sweep_csv_header(replicated, Settings{}), testing::Not(HasSubstr("_ci95")));
}

class SweepCommand : public test::TraceFolder {
 protected:
  SweepCommand() : TraceFolder(test::kTwoBurstsTrace) {}
  test::CliResult sweep(const std::vector<std::string>& extra,
                        const std::string& folder = "sweep") {
    return run_on_trace({"sweep"}, folder, extra);
  }
  std::string csv(const std::string& folder = "sweep") {
    return test::read_file(dir_ / folder / "sweep.csv");
  }
};

TEST_F(SweepCommand, RowsComeInGridOrderRecordedBeforeSynthetic) {
  const auto r = sweep({"--vary", "cores=1:3:1", "--vary", "decode-budget=0.1,0.5", "-j", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> lines = lines_of(csv());
  ASSERT_EQ(lines.size(), 1u + 6 * 2);
  EXPECT_THAT(lines[0], testing::StartsWith("mode,cores,decode-budget,requests,"));
  const std::vector<std::string> expected = {
      "recorded,1,0.1", "synthetic,1,0.1", "recorded,1,0.5", "synthetic,1,0.5",
      "recorded,2,0.1", "synthetic,2,0.1", "recorded,2,0.5", "synthetic,2,0.5",
      "recorded,3,0.1", "synthetic,3,0.1", "recorded,3,0.5", "synthetic,3,0.5"};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_THAT(lines[i + 1], testing::StartsWith(expected[i] + ",")) << i;
  }
  EXPECT_FALSE(fs::exists(dir_ / "sweep" / "requests.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "sweep" / "shard.json"));
  EXPECT_THAT(r.out, HasSubstr("Sweep: 6 points (cores: 3 x decode-budget: 2)"));
}

TEST_F(SweepCommand, RowsEqualSummaryCsvOfTheSameRun) {
  ASSERT_EQ(sweep({"--vary", "cores=1,4", "--modes", "recorded", "--duration", "60"}).status, 0);
  const auto run = test::run_cli({"run", "--recorded", "--trace", trace_, "--cores", "4",
                                  "--duration", "60", "--output", (dir_ / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<std::string> sweep_lines = lines_of(csv());
  const std::vector<std::string> run_lines = lines_of(test::read_file(dir_ / "run/summary.csv"));
  ASSERT_EQ(sweep_lines.size(), 3u);
  ASSERT_EQ(run_lines.size(), 2u);
  // The sweep's row without its knob column is summary.csv's row, to the byte.
  std::vector<std::string> header = fields_of(sweep_lines[0]);
  std::vector<std::string> row = fields_of(sweep_lines[2]);
  EXPECT_EQ(row[1], "4");
  header.erase(header.begin() + 1);
  row.erase(row.begin() + 1);
  EXPECT_EQ(header, fields_of(run_lines[0]));
  EXPECT_EQ(row, fields_of(run_lines[1]));
  // And one core queues where four do not.
  EXPECT_NE(fields_of(sweep_lines[1]), fields_of(sweep_lines[2]));
}

TEST_F(SweepCommand, ReplicatedRowsEqualSummaryCsvOfTheSameCompareRun) {
  ASSERT_EQ(sweep({"--vary", "replications=1,3"}).status, 0);
  const auto run = test::run_cli({"run", "--trace", trace_, "--replications", "3", "--per-request",
                                  "none", "--output", (dir_ / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<std::string> sweep_lines = lines_of(csv());
  const std::vector<std::string> run_lines = lines_of(test::read_file(dir_ / "run/summary.csv"));
  ASSERT_EQ(sweep_lines.size(), 5u);
  ASSERT_EQ(run_lines.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    // Header, recorded and synthetic of the second point, without the knob column.
    std::vector<std::string> fields = fields_of(sweep_lines[i == 0 ? 0 : 2 + i]);
    if (i > 0) {
      EXPECT_EQ(fields[1], "3");
    }
    fields.erase(fields.begin() + 1);
    EXPECT_EQ(fields, fields_of(run_lines[i])) << i;
  }
  // The unreplicated point leaves the confidence columns empty.
  EXPECT_THAT(sweep_lines[2], testing::EndsWith(",,,"));
}

TEST_F(SweepCommand, ResultsDoNotDependOnThreads) {
  const std::vector<std::string> grid = {"--vary", "cores=1:4:1", "--vary",
                                         "mips-per-core=30000,60000"};
  std::vector<std::string> one = grid, four = grid;
  one.insert(one.end(), {"-j", "1"});
  four.insert(four.end(), {"-j", "4"});
  ASSERT_EQ(sweep(one, "one").status, 0);
  ASSERT_EQ(sweep(four, "four").status, 0);
  EXPECT_EQ(csv("one"), csv("four"));
  EXPECT_EQ(lines_of(csv("one")).size(), 1u + 8 * 2);
}

TEST_F(SweepCommand, SettingsJsonHoldsTheDefinitionAndReproducesTheSweep) {
  ASSERT_EQ(sweep({"--vary", "cores=1,2", "--modes", "synthetic", "--seed", "7"}).status, 0);
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "sweep" / "settings.json"));
  EXPECT_EQ(settings["sweep"]["vary"][0]["knob"], "cores");
  EXPECT_EQ(settings["sweep"]["vary"][0]["values"], nlohmann::json({1, 2}));
  EXPECT_EQ(settings["sweep"]["modes"], nlohmann::json({"synthetic"}));
  EXPECT_EQ(settings["run"]["seed"], 7);
  EXPECT_EQ(settings["output"]["per_request"], "none");
  EXPECT_EQ(settings["trace"]["sha256"].get<std::string>().size(), 64u);
  const auto again = test::run_cli({"sweep", "--settings", (dir_ / "sweep/settings.json").string(),
                                    "--output", (dir_ / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(csv("again"), csv());
}

TEST_F(SweepCommand, BadDefinitionsAreRefusedBeforeAnythingIsWritten) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--vary", "core=1,2"}, "--vary: unknown knob 'core' (did you mean cores?)"},
      {{"--vary", "trace=a.csv,b.csv"}, "trace is not a numeric knob"},
      {{"--vary", "per-request=csv"}, "per-request is not a numeric knob"},
      {{"--vary", "metric-percentiles=50,90"}, "metric-percentiles is not a numeric knob"},
      {{"--vary", "time-scale=1,2", "--speedup", "2"}, "--speedup: also varied by --vary"},
      {{"--vary", "cores=0,1"}, "--cores: must be a whole number from 1"},
      {{"--vary", "cores=1:4:0"}, "--vary cores: STEP must be greater than 0"},
      {{"--vary", "cores=1:4:-1"}, "STEP must be greater than 0"},
      {{"--vary", "cores=1:3"}, "expected START:STOP:STEP"},
      {{"--vary", "cores=1:2.5:0.5"}, "--cores: expected a whole number, got '1.5'"},
      {{"--vary", "cores="}, "--vary cores: no values"},
      {{"--vary", "cores=1,,2"}, "--vary cores: an empty value"},
      {{"--vary", "cores"}, "expected KNOB=V1,V2,... or KNOB=START:STOP:STEP"},
      {{"--vary", "cores=1,2", "--vary", "cores=3"}, "varied twice"},
      {{"--vary", "cores=1,2", "--cores", "4"}, "--cores: also varied by --vary cores"},
      {{"--vary", "time-scale=1,x"}, "--time-scale: expected a number, got 'x'"},
      {{"--vary", "cores=1,2", "--modes", "recorded,replay"}, "--modes: expected recorded"},
      {{"--vary", "cores=1,2", "--shard", "3/2"}, "--shard: expected K/N"},
      {{"--vary", "cores=1,2", "--per-request", "csv"}, "writes no requests.csv"},
      {{"--vary", "cores=1,2", "--per-request", "none"}, "--per-request: a sweep writes no"},
      {{"--vary", "cores=1,2", "--plots", "svg"}, "--plots: a sweep draws no plots"},
      {{"--vary", "cores=1,2", "--plots", "none"}, "--plots: a sweep draws no plots"},
      {{"--vary", "cores=1,2", "--mode", "recorded"}, "unknown option (did you mean --modes?)"},
      {{}, "--vary: give at least one KNOB=VALUES"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = sweep(args);
    EXPECT_EQ(r.status, 2) << message;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_FALSE(fs::exists(dir_ / "sweep")) << message;
  }
}

TEST_F(SweepCommand, LargeWholeRangesStayWholeNumbers) {
  ASSERT_EQ(sweep({"--vary", "seed=99999:100001:1", "--modes", "synthetic"}).status, 0);
  const std::vector<std::string> lines = lines_of(csv());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[2], testing::StartsWith("synthetic,100000,"));
  EXPECT_THAT(lines[3], testing::StartsWith("synthetic,100001,"));
}

TEST_F(SweepCommand, RealRangesAndResolutionsAreNumbers) {
  ASSERT_EQ(sweep({"--vary", "time-scale=0.5:1:0.25", "--vary", "time-resolution=exact,1s",
                   "--modes", "recorded"})
                .status,
            0);
  const std::vector<std::string> lines = lines_of(csv());
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_THAT(lines[1], testing::StartsWith("recorded,0.5,0,"));
  EXPECT_THAT(lines[2], testing::StartsWith("recorded,0.5,1,"));
  EXPECT_THAT(lines[3], testing::StartsWith("recorded,0.75,0,"));
  EXPECT_THAT(lines[6], testing::StartsWith("recorded,1,1,"));
}

TEST_F(SweepCommand, ShardsMergeIntoTheWholeSweepInProcess) {
  const std::vector<std::string> grid = {"--vary", "cores=1:5:1", "--modes", "recorded"};
  ASSERT_EQ(sweep(grid, "whole").status, 0);
  std::vector<std::string> parts;
  for (const char* k : {"1", "2", "3"}) {
    std::vector<std::string> args = grid;
    args.insert(args.end(), {"--shard", std::string(k) + "/3"});
    ASSERT_EQ(sweep(args, std::string("part") + k).status, 0);
    parts.push_back((dir_ / (std::string("part") + k)).string());
  }
  const auto shard = nlohmann::json::parse(test::read_file(dir_ / "part2/shard.json"));
  EXPECT_EQ(shard["shard"], 2);
  EXPECT_EQ(shard["shards"], 3);
  EXPECT_EQ(shard["points"], 5);
  EXPECT_EQ(shard["indices"], nlohmann::json({1, 4}));
  EXPECT_EQ(lines_of(csv("part2")).size(), 3u);
  EXPECT_EQ(lines_of(csv("part2"))[0], lines_of(csv("whole"))[0]);

  std::vector<std::string> merge = {"merge", "--output", (dir_ / "merged").string()};
  merge.insert(merge.end(), parts.rbegin(), parts.rend());  // any order
  const auto r = test::run_cli(merge);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(csv("merged"), csv("whole"));
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "merged/settings.json"));
  EXPECT_EQ(settings["sweep"]["vary"][0]["values"], nlohmann::json({1, 2, 3, 4, 5}));
}

TEST_F(SweepCommand, MergeSaysWhichShardsAreMissing) {
  const std::vector<std::string> grid = {"--vary", "cores=1:7:1", "--modes", "recorded"};
  for (const char* k : {"1", "4"}) {
    std::vector<std::string> args = grid;
    args.insert(args.end(), {"--shard", std::string(k) + "/4"});
    ASSERT_EQ(sweep(args, std::string("part") + k).status, 0);
  }
  const auto r = test::run_cli({"merge", "--output", (dir_ / "merged").string(),
                                (dir_ / "part1").string(), (dir_ / "part4").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("4 of 7 points missing (indices 1, 2, 5, 6): run shards 2/4, 3/4"));
  EXPECT_FALSE(fs::exists(dir_ / "merged"));

  const auto twice = test::run_cli({"merge", "--output", (dir_ / "merged").string(),
                                    (dir_ / "part1").string(), (dir_ / "part1").string()});
  EXPECT_EQ(twice.status, 2);
  EXPECT_THAT(twice.err, HasSubstr("shard 1/4 given twice?"));
}

TEST_F(SweepCommand, MergeRefusesPartsOfAnotherSweep) {
  ASSERT_EQ(sweep({"--vary", "cores=1,2", "--modes", "recorded", "--shard", "1/2"}, "a").status, 0);
  ASSERT_EQ(sweep({"--vary", "cores=1,2", "--modes", "recorded", "--shard", "2/2",
                   "--decode-budget", "0.5"},
                  "b")
                .status,
            0);
  ASSERT_EQ(sweep({"--vary", "cores=1,3", "--modes", "recorded", "--shard", "2/2"}, "c").status, 0);
  const auto settings = test::run_cli(
      {"merge", "--output", (dir_ / "m").string(), (dir_ / "a").string(), (dir_ / "b").string()});
  EXPECT_EQ(settings.status, 2);
  EXPECT_THAT(settings.err, HasSubstr("not of the same sweep as " + (dir_ / "a").string() +
                                      ": settings.deadline.decode_budget_s differs"));
  const auto values = test::run_cli(
      {"merge", "--output", (dir_ / "m").string(), (dir_ / "a").string(), (dir_ / "c").string()});
  EXPECT_EQ(values.status, 2);
  EXPECT_THAT(values.err, HasSubstr("sweep.vary differs"));
  const auto unsharded = test::run_cli(
      {"merge", "--output", (dir_ / "m").string(), (dir_ / "a").string(), dir_.string()});
  EXPECT_EQ(unsharded.status, 2);
  EXPECT_THAT(unsharded.err, HasSubstr("no shard.json"));
}

TEST(SweepMerge, RefusesACsvThatDoesNotMatchItsShardJson) {
  Sweep sweep;
  sweep.axes.push_back({"cores", "server.cores", {1, 2}});
  sweep.modes = {"recorded"};
  const nlohmann::ordered_json settings = settings_to_json(Settings{});
  SweepPart part{"p", shard_json(sweep, settings, {1, 1}, {0, 1}), "mode,cores\nrecorded,1\n"};
  EXPECT_THROW(merge_sweep_parts({part}), InputError);  // two points, one row
  part.csv = "mode,cores\nrecorded,1\nrecorded,2\n";
  EXPECT_EQ(merge_sweep_parts({part}), part.csv);
  part.shard["indices"] = {1, 0};
  EXPECT_THROW(merge_sweep_parts({part}), InputError);
}

}  // namespace
}  // namespace infersim
