// Sweeps: the grid, ranges, shards, the rows of sweep.csv, the command's
// checks, and merging shards back into the whole sweep's file.
#include "studies/sweep.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "report/plots.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Two prompts of Mooncake's 512-token blocks, the second sharing the first's
// two blocks, five seconds later (the first long finished). With prefix
// caching on, the second hits those 2 x 512 = 1024 of its 1536 tokens: the
// hit rate over both admissions is 1024 / (1024 + 1536) = 0.4; off, 0.
constexpr const char* kSharedPrefixTrace =
    "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 10, \"hash_ids\": [1, 2]}\n"
    "{\"timestamp\": 5000, \"input_length\": 1536, \"output_length\": 10, \"hash_ids\": [1, 2, "
    "3]}\n";

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
  EXPECT_THAT(test::error_of([] { range_values(1, 4, 0, "--vary cores"); }),
              HasSubstr("--vary cores: STEP must be greater than 0"));
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
  // Words as themselves, switches as their flag takes them.
  EXPECT_EQ(sweep_value_text(nlohmann::json("least-requests")), "least-requests");
  EXPECT_EQ(sweep_value_text(nlohmann::json(true)), "on");
  EXPECT_EQ(sweep_value_text(nlohmann::json(false)), "off");
}

TEST(Sweep, SpeedupSetsTheTimeScaleToItsReciprocal) {
  Sweep sweep;
  sweep.axes.push_back({"speedup", "run.time_scale", {1, 4, 0.5}, true});
  EXPECT_EQ(sweep.point_settings(Settings{}, 1).time_scale, 0.25);
  EXPECT_EQ(sweep.point_settings(Settings{}, 2).time_scale, 2.0);
  EXPECT_TRUE(sweep.axes[0].numeric());
  sweep.axes[0].values = {0};
  EXPECT_THROW(check_sweep(sweep, Settings{}), InputError);
}

TEST(Sweep, EachPointDoneIsToldOnceInCountingOrder) {
  Trace trace;
  for (std::int64_t i = 0; i < 4; ++i)
    trace.records.push_back(TraceRecord{i * 1'000'000'000, 100, 10});
  Sweep sweep;
  sweep.axes.push_back({"cores", "server.cores", {1, 2, 3, 4, 5}});
  sweep.modes = {"recorded"};
  std::vector<std::size_t> told;
  const auto results = run_sweep(sweep, Settings{}, trace, {0, 2, 4}, 2,
                                 [&](std::size_t done) { told.push_back(done); });
  EXPECT_EQ(results.size(), 3u);
  EXPECT_THAT(told, ElementsAre(1, 2, 3));
}

TEST(Sweep, CheckRefusesWhatCannotRun) {
  Sweep twice = two_axes();
  twice.axes.push_back({"cores", "server.cores", {4}});
  EXPECT_THROW(check_sweep(twice, Settings{}), InputError);
  Sweep zero = two_axes();
  zero.axes[0].values = {1, 0};
  EXPECT_THAT(test::error_of([&] { check_sweep(zero, Settings{}); }),
              HasSubstr("--cores: must be a whole number from 1"));
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

// The retimed mode (the recorded requests at synthetic instants) in a sweep:
// its rows between the recorded and the synthetic ones, the recorded
// requests' count, and the retimed rows of the compare run at that point.
TEST_F(SweepCommand, TheRetimedModeSweepsBesideTheOthers) {
  ASSERT_EQ(sweep({"--vary", "cores=1,2", "--modes", "synthetic,retimed,recorded"}).status, 0);
  const std::vector<std::string> lines = lines_of(csv());
  ASSERT_EQ(lines.size(), 1u + 2 * 3);
  EXPECT_THAT(lines[1], testing::StartsWith("recorded,1,8,"));
  EXPECT_THAT(lines[2], testing::StartsWith("retimed,1,8,"));
  EXPECT_THAT(lines[3], testing::StartsWith("synthetic,1,"));
  const auto run = test::run_cli({"run", "--trace", trace_, "--cores", "2", "--per-request", "none",
                                  "--plots", "none", "--output", (dir_ / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<std::string> run_lines = lines_of(test::read_file(dir_ / "run/summary.csv"));
  std::vector<std::string> fields = fields_of(lines[5]);
  fields.erase(fields.begin() + 1);
  EXPECT_EQ(fields, fields_of(run_lines[3]));  // the compare run's retimed row
}

TEST_F(SweepCommand, ReplicatedRowsEqualSummaryCsvOfTheSameCompareRun) {
  ASSERT_EQ(sweep({"--vary", "replications=1,3"}).status, 0);
  const auto run = test::run_cli({"run", "--trace", trace_, "--replications", "3", "--per-request",
                                  "none", "--output", (dir_ / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<std::string> sweep_lines = lines_of(csv());
  const std::vector<std::string> run_lines = lines_of(test::read_file(dir_ / "run/summary.csv"));
  ASSERT_EQ(sweep_lines.size(), 5u);
  // The compare run's summary.csv: header, recorded, synthetic, then retimed
  // (the recorded requests at synthetic instants), which this sweep leaves out.
  ASSERT_EQ(run_lines.size(), 4u);
  EXPECT_EQ(run_lines[3].substr(0, 8), "retimed,");
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
      {{"--vary", "trace=a.csv,b.csv"}, "trace is a trace knob, and a sweep reads one trace"},
      {{"--vary", "format=csv,jsonl"}, "format is a trace knob"},
      {{"--vary", "per-request=csv"}, "per-request is not a knob a sweep varies"},
      {{"--vary", "plots=svg,none"}, "plots is not a knob a sweep varies"},
      {{"--vary", "metric-percentiles=50,90"}, "metric-percentiles is not a knob a sweep varies"},
      {{"--vary", "time-scale=1,2", "--speedup", "2"}, "--speedup: also varied by --vary"},
      {{"--vary", "speedup=1,2", "--speedup", "2"}, "--speedup: also varied by --vary speedup"},
      {{"--vary", "speedup=1,2", "--time-scale", "2"},
       "--time-scale: also varied by --vary speedup"},
      {{"--vary", "speedup=1,2", "--vary", "time-scale=1,2"}, "varied twice"},
      {{"--vary", "speedup=0,1"}, "--speedup: must be greater than 0, got 0"},
      {{"--vary", "router=round-robin:prefix:1"},
       "--vary router: START:STOP:STEP is for a knob that takes numbers"},
      {{"--vary", "router=round-robin,fastest"}, "--router: "},
      {{"--vary", "prefix-caching=on,maybe"}, "--prefix-caching: expected on or off, got 'maybe'"},
      {{"--vary", "speedpu=1,2"}, "unknown knob 'speedpu' (did you mean speedup?)"},
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
      {{"--vary", "cores=1,2", "--modes", "recorded,replay"},
       "--modes: expected some of recorded, retimed and synthetic"},
      {{"--vary", "cores=1,2", "--shard", "3/2"}, "--shard: expected K/N"},
      {{"--vary", "cores=1,2", "--per-request", "csv"}, "writes no requests.csv"},
      {{"--vary", "cores=1,2", "--per-request", "none"}, "--per-request: a sweep writes no"},
      {{"--vary", "cores=1,2", "--plots", "png"}, "--plots"},
      {{"--vary", "cores=1,2", "--shard", "1/2", "--plots", "svg"},
       "--plots: a shard draws no plots"},
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

// The figures of sweep.csv's rows by column name.
std::vector<std::map<std::string, std::string>> rows_of(const std::string& csv) {
  const std::vector<std::string> lines = lines_of(csv);
  const std::vector<std::string> header = fields_of(lines.at(0));
  std::vector<std::map<std::string, std::string>> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = fields_of(lines[i]);
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < header.size() && c < fields.size(); ++c)
      row[header[c]] = fields[c];
    rows.push_back(std::move(row));
  }
  return rows;
}

// summary.csv of a plain run, without the knob columns, next to a sweep row's.
void expect_row_is_the_run(const std::string& sweep_line, std::size_t knob_columns,
                           const std::string& summary_csv) {
  std::vector<std::string> row = fields_of(sweep_line);
  row.erase(row.begin() + 1, row.begin() + 1 + static_cast<std::ptrdiff_t>(knob_columns));
  EXPECT_EQ(row, fields_of(lines_of(summary_csv).at(1)));
}

TEST_F(SweepCommand, BatchingReplicasAndRoutersSweepAndMoreReplicasNeverMeetFewer) {
  const std::string trace = test::write_file(dir_ / "burst.csv", test::kBurstTrace).string();
  trace_ = trace;  // the trace sweep() gives
  const std::vector<std::string> tight = {"--server", "batching",        "--ttft-budget",
                                          "0.3",      "--decode-budget", "0.01"};
  std::vector<std::string> args = {
      "--vary",  "replicas=1:4:1", "--vary",  "router=round-robin,kv-aware",
      "--modes", "recorded",       "--plots", "none"};
  args.insert(args.end(), tight.begin(), tight.end());
  const auto r = sweep(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = csv();
  // The batching server's figures, as a batching run's summary.csv has them.
  const std::string header = lines_of(text)[0];
  EXPECT_THAT(header, testing::StartsWith("mode,replicas,router,requests,"));
  for (const char* key : {",prefix_hit_rate,", ",kv_peak_utilization,", ",preemptions,",
                          ",itl_p99_s,", ",avg_batch_requests,"}) {
    EXPECT_THAT(header, HasSubstr(key));
  }
  const auto rows = rows_of(text);
  ASSERT_EQ(rows.size(), 8u);
  for (const char* router : {"round-robin", "kv-aware"}) {
    int before = -1;
    for (const auto& row : rows) {
      if (row.at("router") != router) continue;
      const int met = std::stoi(row.at("deadline_met"));
      EXPECT_GE(met, before) << router << " replicas=" << row.at("replicas");
      before = met;
    }
  }
  // One replica misses deadlines that three meet.
  EXPECT_LT(std::stoi(rows[0].at("deadline_met")), 8);
  EXPECT_EQ(rows[4].at("replicas"), "3");
  EXPECT_EQ(rows[4].at("deadline_met"), "8");
  // A row is the run of its point, to the byte.
  std::vector<std::string> run = {
      "run", "--recorded", "--trace",  trace,      "--replicas",
      "2",   "--router",   "kv-aware", "--output", (dir_ / "run").string()};
  run.insert(run.end(), tight.begin(), tight.end());
  const auto one = test::run_cli(run);
  ASSERT_EQ(one.status, 0) << one.err;
  expect_row_is_the_run(lines_of(text)[4], 2, test::read_file(dir_ / "run/summary.csv"));
  EXPECT_THAT(r.out, HasSubstr("replicas=2 router=kv-aware recorded  success_rate="));
  EXPECT_THAT(r.out, HasSubstr(" prefix_hit_rate=0 kv_peak_utilization="));
}

TEST_F(SweepCommand, SwitchesTakeOnAndOff) {
  trace_ = test::write_file(dir_ / "shared.jsonl", kSharedPrefixTrace).string();
  ASSERT_EQ(sweep({"--server", "batching", "--vary", "prefix-caching=on,off", "--modes", "recorded",
                   "--plots", "none"})
                .status,
            0);
  const auto rows = rows_of(csv());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("prefix-caching"), "on");
  EXPECT_EQ(rows[0].at("prefix_hit_rate"), "0.4");  // worked out beside the trace
  EXPECT_EQ(rows[1].at("prefix-caching"), "off");
  EXPECT_EQ(rows[1].at("prefix_hit_rate"), "0");
  // settings.json keeps them as JSON booleans, and reruns the sweep.
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "sweep" / "settings.json"));
  EXPECT_EQ(settings["sweep"]["vary"][0]["values"], nlohmann::json({true, false}));
  const auto again = test::run_cli({"sweep", "--settings", (dir_ / "sweep/settings.json").string(),
                                    "--output", (dir_ / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(csv("again"), csv());
}

TEST_F(SweepCommand, TheServerKindIsAKnobAndTheColumnsFollowIt) {
  ASSERT_EQ(
      sweep({"--vary", "server=edge,batching", "--modes", "recorded", "--plots", "none"}).status,
      0);
  const auto rows = rows_of(csv());
  ASSERT_EQ(rows.size(), 2u);
  // The edge server's figures, then the batching server's; each row fills its own.
  EXPECT_EQ(rows[0].at("server"), "edge");
  EXPECT_NE(rows[0].at("avg_exec_s"), "");
  EXPECT_EQ(rows[0].at("prefix_hit_rate"), "");
  EXPECT_EQ(rows[1].at("server"), "batching");
  EXPECT_EQ(rows[1].at("avg_exec_s"), "");
  EXPECT_EQ(rows[1].at("prefix_hit_rate"), "0");
}

TEST_F(SweepCommand, SpeedupIsTrafficGrowth) {
  ASSERT_EQ(
      sweep({"--vary", "speedup=1,4", "--modes", "recorded", "--cores", "1", "--plots", "none"})
          .status,
      0);
  const std::vector<std::string> lines = lines_of(csv());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[0], testing::StartsWith("mode,speedup,requests,"));
  EXPECT_THAT(lines[2], testing::StartsWith("recorded,4,"));
  const auto run = test::run_cli({"run", "--recorded", "--trace", trace_, "--cores", "1",
                                  "--speedup", "4", "--output", (dir_ / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  expect_row_is_the_run(lines[2], 1, test::read_file(dir_ / "run/summary.csv"));
  // Four times the traffic on one core waits longer.
  const auto rows = rows_of(csv());
  EXPECT_GT(std::stod(rows[1].at("avg_wait_s")), std::stod(rows[0].at("avg_wait_s")));
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "sweep" / "settings.json"));
  EXPECT_EQ(settings["sweep"]["vary"][0]["knob"], "speedup");
  EXPECT_EQ(settings["sweep"]["vary"][0]["values"], nlohmann::json({1.0, 4.0}));
}

TEST_F(SweepCommand, PlotsAreDrawnUnlessTurnedOff) {
  const auto drawn = sweep({"--vary", "cores=1,2", "--vary", "decode-budget=0.1,0.5"}, "drawn");
  ASSERT_EQ(drawn.status, 0) << drawn.err;
  for (const char* key : {"success_rate", "avg_wait_s", "ttft_p99_s", "utilization", "energy_wh"}) {
    const std::string script =
        test::read_file(dir_ / "drawn" / "plots" / (std::string(key) + ".gp"));
    EXPECT_THAT(script, HasSubstr("plot 'sweep.csv' using \"cores\":\"" + std::string(key) + "\""));
    EXPECT_THAT(script, HasSubstr("title \"decode-budget=0.5, synthetic\""));
    if (run_program({"gnuplot", "--version"}, "").status == 0) {
      EXPECT_TRUE(fs::exists(dir_ / "drawn" / "plots" / (std::string(key) + ".svg"))) << drawn.err;
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "drawn" / "plots" / "prefix_hit_rate.gp"));  // the edge server
  EXPECT_THAT(drawn.out, HasSubstr("Plots (plots/*.gp, *.svg): success_rate, avg_wait_s,"));

  ASSERT_EQ(sweep({"--vary", "cores=1,2", "--plots", "none"}, "none").status, 0);
  EXPECT_FALSE(fs::exists(dir_ / "none" / "plots"));

  // Shards draw none; merge draws the whole sweep's.
  for (const char* k : {"1", "2"}) {
    ASSERT_EQ(
        sweep({"--vary", "cores=1,2", "--shard", std::string(k) + "/2"}, std::string("part") + k)
            .status,
        0);
    EXPECT_FALSE(fs::exists(dir_ / (std::string("part") + k) / "plots"));
  }
  const auto merged = test::run_cli({"merge", "--output", (dir_ / "merged").string(),
                                     (dir_ / "part1").string(), (dir_ / "part2").string()});
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_THAT(test::read_file(dir_ / "merged" / "plots" / "success_rate.gp"),
              HasSubstr("title \"synthetic\""));
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
