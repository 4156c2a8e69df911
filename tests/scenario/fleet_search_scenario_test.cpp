// capacity --vary fleet end to end: why the search assumes no monotonicity
// (on the Mooncake hour, L40S replicas added to four H100s push TTFT p99 past
// a target the H100s alone meet), the search in order of cost agreeing with
// the whole grid, the files it writes, and what it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;

std::string example() {
  return (test::source_dir() / "settings" / "fleet_search_h100_l40s.json").string();
}

class FleetSearchRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir();
    trace_ = test::write_file(dir_ / "trace.csv", test::forty_requests_trace()).string();
  }
  test::CliResult capacity(const std::string& folder, std::vector<std::string> extra) {
    std::vector<std::string> args = {"capacity", "--settings", example(),
                                     "--trace",  trace_,       "--plots",
                                     "none",     "--output",   (dir_ / folder).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args);
  }
  std::filesystem::path dir_;
  std::string trace_;
};

// The fleet of the committed example at given counts, on the Mooncake hour.
nlohmann::json mooncake_summary(const std::filesystem::path& dir, int h100, int l40s) {
  nlohmann::json settings = nlohmann::json::parse(test::read_file(example()));
  settings.erase("capacity");
  nlohmann::json fleet = nlohmann::json::array();
  for (auto [index, count] : {std::pair{0, h100}, std::pair{1, l40s}}) {
    if (count == 0) continue;
    nlohmann::json c = settings["batching"]["fleet"][index];
    c["replicas"] = count;
    fleet.push_back(c);
  }
  settings["batching"]["fleet"] = fleet;
  const std::string name = "mooncake_" + std::to_string(h100) + "_" + std::to_string(l40s);
  const std::string file = test::write_file(dir / (name + ".json"), settings.dump()).string();
  const auto trace = test::source_dir() / "trace" / "mooncake_conversation_trace.jsonl";
  if (!std::filesystem::exists(trace)) ADD_FAILURE() << trace << " is missing: run trace/fetch";
  const test::CliResult r =
      test::run_cli({"run", "--settings", file, "--trace", trace.string(), "--recorded", "--plots",
                     "none", "--output", (dir / name).string()});
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(test::read_file(dir / name / "summary.json"));
}

// The router does not know a replica's speed: with L40S replicas beside the
// H100s it sends them long prompts, whose prefill sets the tail. Meeting a
// TTFT target is then not monotone in the counts, and a search that assumed
// it (a fleet that meets the target still does with a replica more) would
// answer wrongly.
TEST_F(FleetSearchRun, MoreReplicasCanMissATargetFewerMeet) {
  const nlohmann::json alone = mooncake_summary(dir_, 4, 0);
  const nlohmann::json mixed = mooncake_summary(dir_, 4, 8);
  const double target = 6;  // the example's ttft_p99_s bound
  EXPECT_LE(alone["ttft_p99_s"].get<double>(), target);
  EXPECT_GT(mixed["ttft_p99_s"].get<double>(), target);
  EXPECT_GT(mixed["cost_usd"].get<double>(), alone["cost_usd"].get<double>());
}

TEST_F(FleetSearchRun, InOrderOfCostAgreesWithTheWholeGrid) {
  const std::vector<std::string> common = {
      "--min", "0", "--max", "3", "--target", "ttft_p99_s<=0.1", "--modes", "recorded,synthetic"};
  std::vector<std::string> whole = common;
  whole.push_back("--exhaustive");
  const test::CliResult ordered = capacity("ordered", common);
  const test::CliResult grid = capacity("grid", whole);
  ASSERT_EQ(ordered.status, 0) << ordered.err;
  ASSERT_EQ(grid.status, 0) << grid.err;
  const auto a = nlohmann::json::parse(test::read_file(dir_ / "ordered" / "capacity.json"));
  const auto b = nlohmann::json::parse(test::read_file(dir_ / "grid" / "capacity.json"));
  for (const char* mode : {"recorded", "synthetic"}) {
    SCOPED_TRACE(mode);
    EXPECT_EQ(a[mode]["fleet"], b[mode]["fleet"]);
    EXPECT_EQ(a[mode]["usd_per_hour"], b[mode]["usd_per_hour"]);
    EXPECT_EQ(a[mode]["method"], "cost order");
    EXPECT_EQ(b[mode]["method"], "exhaustive");
    EXPECT_EQ(b[mode]["runs"], 15);  // 4 x 4 counts, less the empty fleet
    EXPECT_EQ(b[mode]["grid"], 15);
    EXPECT_LE(a[mode]["runs"].get<int>(), 15);
    EXPECT_EQ(a[mode]["fleet"]["h100"], 1);  // 3 $ an hour: the third fleet in cost order
    EXPECT_EQ(a[mode]["fleet"]["l40s"], 0);
    // Every fleet of the grid cheaper than the answer fails, and a larger one
    // fails too: an L40S beside the H100 takes prompts it prefills slower.
    bool larger_fails = false;
    for (const auto& step : b[mode]["steps"]) {
      if (step["usd_per_hour"].get<double>() < a[mode]["usd_per_hour"].get<double>()) {
        EXPECT_FALSE(step["met"].get<bool>()) << step.dump();
      }
      larger_fails = larger_fails || (step["fleet"]["h100"] == 1 && step["fleet"]["l40s"] == 1 &&
                                      !step["met"].get<bool>());
    }
    EXPECT_TRUE(larger_fails);
  }
  EXPECT_THAT(ordered.out, HasSubstr(" an hour, usd_per_million_tokens="));
  EXPECT_THAT(ordered.out, HasSubstr("of 15 fleets run, cost order"));
  const std::string csv = test::read_file(dir_ / "grid" / "capacity.csv");
  EXPECT_EQ(csv.rfind("mode,run,h100,l40s,usd_per_hour,met,front,", 0), 0u) << csv;
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "grid" / "settings.json"));
  EXPECT_EQ(settings["capacity"]["vary"], "fleet");
  EXPECT_EQ(settings["capacity"]["exhaustive"], true);
}

TEST_F(FleetSearchRun, SaysWhyNoFleetCanMeetATtftBelowTheIdlePrefill) {
  const test::CliResult r = capacity(
      "impossible", {"--max", "2", "--target", "ttft_p99_s<=0.001", "--modes", "recorded"});
  EXPECT_EQ(r.status, 4);
  EXPECT_THAT(r.out, HasSubstr("not found: no fleet of the grid meets the target; on idle "
                               "replicas the ttft_p99_s would already be"));
  EXPECT_THAT(r.out, HasSubstr("on its fastest class"));
}

// A sweep reads the presets a fleet's classes name, as run and capacity do.
TEST_F(FleetSearchRun, ASweepTakesAFleetOfPresets) {
  const test::CliResult r =
      test::run_cli({"sweep", "--settings", example(), "--trace", trace_, "--vary",
                     "router=round-robin,least-requests", "--modes", "recorded", "--plots", "none",
                     "--output", (dir_ / "sweep").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string csv = test::read_file(dir_ / "sweep" / "sweep.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_THAT(csv, HasSubstr("cost_usd"));
}

TEST_F(FleetSearchRun, RefusesWhatItCannotSize) {
  struct Case {
    std::vector<std::string> args;
    std::string has;
  };
  const std::string plain =
      test::write_file(dir_ / "plain.json", R"({"server": {"kind": "batching"}})").string();
  const std::string scaled = (test::source_dir() / "settings" / "fleet_h100_l40s.json").string();
  const std::vector<Case> cases = {
      {{"capacity", "--settings", plain, "--vary", "fleet", "--target", "ttft_p99_s<=2"},
       "--vary fleet: sizes a fleet's classes"},
      {{"capacity", "--settings", scaled, "--vary", "fleet", "--target", "ttft_p99_s<=2"},
       "batching.fleet[1].autoscale: capacity --vary fleet sizes fixed counts"},
      {{"capacity", "--settings", example(), "--vary", "replicas", "--exhaustive"},
       "--exhaustive: sizes a fleet"},
      {{"capacity", "--settings", example(), "--tolerance", "0.1"}, "--tolerance"},
      {{"capacity", "--settings", example(), "--min", "-1"}, "--min"},
      {{"capacity", "--settings", example(), "--max", "70000"}, "from 0 to 4096"},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.has);
    std::vector<std::string> args = c.args;
    const std::string folder = (dir_ / ("refused" + std::to_string(i++))).string();
    args.insert(args.end(), {"--trace", trace_, "--output", folder});
    const test::CliResult r = test::run_cli(args);
    EXPECT_NE(r.status, 0);
    EXPECT_THAT(r.err, HasSubstr(c.has));
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder) / "capacity.json"));
  }
}

}  // namespace
}  // namespace infersim
