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

#include "cli/command_options.hpp"
#include "core/number_format.hpp"
#include "scenario/scenario.hpp"
#include "scenario/settings.hpp"
#include "studies/capacity.hpp"
#include "studies/sweep.hpp"
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

// The counterexample to a false floor: thirteen H100s of the example reach a
// TTFT p99 of about 4.0 s on the Mooncake hour, where the idle bound once
// claimed 4.04 s for any count (it counted prompts past max_model_len and no
// prefix cache). Their own p99 as the target is never out of reach.
TEST_F(FleetSearchRun, TheIdleBoundIsBelowWhatThirteenH100sReach) {
  const nlohmann::json reached = mooncake_summary(dir_, 13, 0);
  Settings settings;
  apply_settings_file(settings, (dir_ / "mooncake_13_0.json").string());
  load_fleet_presets(settings);
  settings.trace_path =
      (test::source_dir() / "trace" / "mooncake_conversation_trace.jsonl").string();
  const LoadedTrace loaded = load_trace(settings);
  const double p99 = reached["ttft_p99_s"].get<double>();
  const Target at = parse_target("ttft_p99_s<=" + shortest(p99), summary_keys(settings));
  EXPECT_EQ(idle_bound_reason(settings, loaded.trace, "recorded", at), "");
  // Far below, the bound still speaks.
  const Target never = parse_target("ttft_p99_s<=0.01", summary_keys(settings));
  EXPECT_THAT(idle_bound_reason(settings, loaded.trace, "recorded", never),
              HasSubstr("no count of replicas meets it"));
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
  EXPECT_THAT(r.out, HasSubstr("not found: no fleet of the grid meets the target; the closest "
                               "run, "));
  EXPECT_THAT(r.out, HasSubstr("; on idle replicas the ttft_p99_s would already be"));
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

// An autoscaled class is sized by its maximum. What it bills above its
// minimum is known only once it has run, so the search runs the fleets in
// order of the least they can cost and stops when that least reaches the
// cheapest found: the answer is the whole grid's, and every fleet that could
// have cost less was run.
TEST_F(FleetSearchRun, SizesAnAutoscaledClassByItsBound) {
  nlohmann::json settings = nlohmann::json::parse(test::read_file(example()));
  settings["batching"]["fleet"][1]["autoscale"] = {{"min", 1},
                                                   {"interval_s", 0.2},
                                                   {"target_requests", 1},
                                                   {"startup_s", 0.3},
                                                   {"scale_down_delay_s", 0.5}};
  settings["batching"]["fleet"][1]["autoscale"]["max"] = 1;
  const std::string file = test::write_file(dir_ / "scaled.json", settings.dump()).string();
  const auto search = [&](const std::string& folder, bool exhaustive) {
    std::vector<std::string> args = {"capacity", "--settings", file,
                                     "--trace",  trace_,       "--plots",
                                     "none",     "--output",   (dir_ / folder).string(),
                                     "--min",    "0",          "--max",
                                     "3",        "--target",   "ttft_p99_s<=0.22",
                                     "--modes",  "recorded"};
    if (exhaustive) args.push_back("--exhaustive");
    const test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return std::pair{r, nlohmann::json::parse(test::read_file(dir_ / folder / "capacity.json"))};
  };
  const auto [bounded_run, bounded] = search("bounded", false);
  const auto [whole_run, whole] = search("whole", true);
  const nlohmann::json& a = bounded["recorded"];
  const nlohmann::json& b = whole["recorded"];
  ASSERT_FALSE(a["fleet"].is_null()) << a.dump();
  // On these forty requests an autoscaled L40S class that may grow to two
  // replicas meets the target for less than an H100 (its runs are below).
  EXPECT_TRUE(a["fleet"]["l40s"].is_object()) << a.dump();
  EXPECT_EQ(a["fleet"], b["fleet"]);
  EXPECT_LT(a["runs"].get<int>(), b["runs"].get<int>());
  EXPECT_EQ(a["usd_per_hour"], b["usd_per_hour"]);
  EXPECT_EQ(b["grid"], 15);  // h100 0..3 by l40s 0 or 1..3 as its maximum, less the empty fleet
  const double answer = a["usd_per_hour"].get<double>();
  bool measured = false, scaled_up = false;
  for (const auto& step : b["steps"]) {
    const bool autoscaled = step["fleet"]["l40s"].is_object();
    if (!autoscaled) continue;
    // Billed at least its minimum; a run's own bill an hour otherwise.
    EXPECT_GE(step["usd_per_hour"].get<double>(), step["least_usd_per_hour"].get<double>() - 1e-9);
    measured = true;
    scaled_up = scaled_up || step["usd_per_hour"].get<double>() >
                                 step["least_usd_per_hour"].get<double>() + 1e-9;
    EXPECT_EQ(step["fleet"]["l40s"]["min"], 1);
    // Every fleet that could cost less than the answer was run by the bounded search.
    if (step["least_usd_per_hour"].get<double>() < answer) {
      EXPECT_TRUE(std::any_of(a["steps"].begin(), a["steps"].end(), [&](const nlohmann::json& s) {
        return s["fleet"] == step["fleet"];
      })) << step.dump();
    }
    if (step["usd_per_hour"].get<double>() < answer) {
      EXPECT_FALSE(step["met"].get<bool>()) << step.dump();
    }
  }
  EXPECT_TRUE(measured);
  EXPECT_TRUE(scaled_up) << "the autoscaler started a replica in some run";
  EXPECT_THAT(bounded_run.out, HasSubstr("until that least was no less than the cheapest found"));
  EXPECT_THAT(bounded_run.out, HasSubstr("recorded  h100=0 l40s=1.."));
  EXPECT_THAT(bounded_run.out,
              HasSubstr("l40s ($1.00 a replica-hour, autoscaled from 1: its maximum sized)"));
}

TEST_F(FleetSearchRun, RefusesWhatItCannotSize) {
  struct Case {
    std::vector<std::string> args;
    std::string has;
  };
  const std::string plain =
      test::write_file(dir_ / "plain.json", R"({"server": {"kind": "batching"}})").string();
  const std::vector<Case> cases = {
      {{"capacity", "--settings", plain, "--vary", "fleet", "--target", "ttft_p99_s<=2"},
       "--vary fleet: sizes a fleet's classes"},
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
