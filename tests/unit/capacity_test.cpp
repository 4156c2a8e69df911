// Capacity: parsing targets, bisecting whole and real knobs, and the command
// on a small trace, checked against plain runs at the answer and below it.
#include "studies/capacity.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/number_format.hpp"
#include "scenario/scenario.hpp"
#include "studies/sweep.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A summary whose only figures are success_rate and avg_wait_s.
Summary fake(double success_rate, std::optional<double> avg_wait_s = 0) {
  Summary s;
  s.add("success_rate", success_rate);
  s.add("avg_wait_s", avg_wait_s);
  return s;
}

Target target_of(const std::string& text) {
  return parse_target(text, summary_keys(Settings{}));
}

std::string error_of(const std::string& text) {
  return test::error_of([&] { target_of(text); });
}

TEST(CapacityTarget, ParsesClausesThatMustAllHold) {
  const Target t = target_of("success_rate>=0.99, avg_wait_s < 1,ttft_p99_s<=2");
  ASSERT_EQ(t.clauses.size(), 3u);
  EXPECT_EQ(t.clauses[0].key, "success_rate");
  EXPECT_EQ(t.clauses[0].comparison, TargetClause::kAtLeast);
  EXPECT_EQ(t.clauses[0].value, 0.99);
  EXPECT_EQ(t.clauses[1].key, "avg_wait_s");
  EXPECT_EQ(t.clauses[1].comparison, TargetClause::kBelow);
  EXPECT_EQ(t.clauses[2].comparison, TargetClause::kAtMost);
  EXPECT_THAT(t.keys(), testing::ElementsAre("success_rate", "avg_wait_s", "ttft_p99_s"));
  EXPECT_EQ(target_of("requests==5").clauses[0].comparison, TargetClause::kEqual);
  EXPECT_EQ(target_of("utilization>0.5").clauses[0].comparison, TargetClause::kAbove);

  const Target both = target_of("success_rate>=0.99,avg_wait_s<=1");
  EXPECT_TRUE(both.met_by(fake(0.99, 1)));
  EXPECT_FALSE(both.met_by(fake(0.98, 0)));
  EXPECT_FALSE(both.met_by(fake(1, 1.5)));
  EXPECT_FALSE(both.met_by(fake(1, std::nullopt)));  // a missing figure never holds
}

TEST(CapacityTarget, BadTargetsSayWhatIsWrong) {
  EXPECT_THAT(error_of("sucess_rate>=0.99"),
              HasSubstr("--target: unknown figure 'sucess_rate' (did you mean success_rate?)"));
  EXPECT_THAT(error_of("success_rate"), HasSubstr("no comparison"));
  EXPECT_THAT(error_of("success_rate=1"), HasSubstr("write =="));
  EXPECT_THAT(error_of("success_rate!=1"), HasSubstr("'!' is not a comparison"));
  EXPECT_THAT(error_of("success_rate>=high"), HasSubstr("'high' is not a number"));
  EXPECT_THAT(error_of(">=1"), HasSubstr("no figure"));
  EXPECT_THAT(error_of("success_rate>=1,"), HasSubstr("empty clause"));
  EXPECT_THAT(error_of(""), HasSubstr("empty clause"));
}

// A search of `knob` (the settings' `key`), whole numbers or not, over
// [min, max] for `target`.
CapacitySearch search_of(const std::string& knob, const std::string& key, bool whole, double min,
                         double max, const std::string& target) {
  CapacitySearch search;
  search.knob = knob;
  search.key = key;
  search.whole = whole;
  search.min = min;
  search.max = max;
  search.target = target_of(target);
  return search;
}

CapacitySearch whole_search(double min, double max) {
  return search_of("cores", "server.cores", true, min, max, "success_rate>=0.99");
}

TEST(CapacityBisection, WholeKnobFindsTheFirstValueThatMeets) {
  for (const int threshold : {2, 37, 512, 1023, 1024}) {
    int runs = 0;
    const CapacityResult r = bisect_capacity(whole_search(1, 1024), [&](double cores) {
      ++runs;
      EXPECT_EQ(cores, std::floor(cores));
      return fake(cores >= threshold ? 1.0 : 0.5);
    });
    ASSERT_EQ(r.outcome, CapacityResult::kFound) << threshold;
    EXPECT_EQ(r.answer->value, threshold);
    EXPECT_EQ(r.below->value, threshold - 1);
    EXPECT_TRUE(r.answer->met);
    EXPECT_FALSE(r.below->met);
    EXPECT_LE(runs, 12);  // the two bounds and log2(1023) halvings
    EXPECT_EQ(static_cast<std::size_t>(runs), r.probes.size());
    EXPECT_LE(r.probes.size(), capacity_max_runs(whole_search(1, 1024)));
  }
}

TEST(CapacityBisection, BoundsAreCheckedFirst) {
  const CapacityResult never =
      bisect_capacity(whole_search(1, 1024), [](double) { return fake(0.5); });
  EXPECT_EQ(never.outcome, CapacityResult::kMaximumFails);
  EXPECT_FALSE(never.answer);
  EXPECT_EQ(never.below->value, 1024);
  EXPECT_EQ(never.probes.size(), 1u);
  EXPECT_EQ(never.reason,
            "even the maximum, cores=1024, fails the target (it reached "
            "success_rate=0.5)");

  const CapacityResult always =
      bisect_capacity(whole_search(4, 1024), [](double) { return fake(1); });
  EXPECT_EQ(always.outcome, CapacityResult::kMinimumMeets);
  EXPECT_EQ(always.answer->value, 4);
  EXPECT_FALSE(always.below);
  EXPECT_EQ(always.probes.size(), 2u);
  EXPECT_THAT(always.reason, HasSubstr("the minimum, cores=4, already meets the target"));

  const CapacityResult single = bisect_capacity(whole_search(5, 5), [](double) { return fake(1); });
  EXPECT_EQ(single.outcome, CapacityResult::kMinimumMeets);
  EXPECT_EQ(single.probes.size(), 1u);  // each value runs once
}

TEST(CapacityBisection, EachRunIsToldAsItEnds) {
  std::vector<double> told;
  const CapacityResult r = bisect_capacity(
      whole_search(1, 16), [](double cores) { return fake(cores >= 5 ? 1.0 : 0.5); },
      [&](const CapacityProbe& p) { told.push_back(p.value); });
  // 16, 1, then halving [1, 16]: 8, 4, 6, 5.
  EXPECT_THAT(told, testing::ElementsAre(16, 1, 8, 4, 6, 5));
  EXPECT_EQ(r.answer->value, 5);
  EXPECT_EQ(capacity_max_runs(whole_search(1, 16)), 6u);  // 2 + log2(15) rounded up
  EXPECT_EQ(capacity_max_runs(whole_search(1, 1024)), 12u);
  EXPECT_EQ(capacity_max_runs(whole_search(3, 3)), 1u);
}

TEST(CapacityBisection, RealKnobStopsWithinTheTolerance) {
  CapacitySearch search =
      search_of("mips-per-core", "server.mips_per_core", false, 1000, 200000, "avg_wait_s<=1");
  search.tolerance = 1e-3;
  const double threshold = 61234.5;
  const CapacityResult r =
      bisect_capacity(search, [&](double mips) { return fake(1, mips >= threshold ? 0.5 : 2); });
  ASSERT_EQ(r.outcome, CapacityResult::kFound);
  EXPECT_GE(r.answer->value, threshold);
  EXPECT_LT(r.below->value, threshold);
  EXPECT_LE(r.answer->value - r.below->value, 1e-3 * r.answer->value);
  EXPECT_GT(r.answer->value - r.below->value, 0.25e-3 * r.answer->value);  // no needless runs
  EXPECT_LE(r.probes.size(), capacity_max_runs(search));
}

TEST(CapacityBisection, RealKnobNearZeroStopsAtTheRangeFloor) {
  const CapacitySearch search =
      search_of("decode-budget", "deadline.decode_budget_s", false, 0, 1, "success_rate>=0.99");
  const CapacityResult r =
      bisect_capacity(search, [](double budget) { return fake(budget > 0 ? 1 : 0); });
  ASSERT_EQ(r.outcome, CapacityResult::kFound);
  EXPECT_EQ(r.below->value, 0);
  EXPECT_LE(r.answer->value, 1e-6);
  EXPECT_LE(r.probes.size(), 25u);
}

TEST(CapacityBisection, RefusesImpossibleSearches) {
  EXPECT_THROW(bisect_capacity(whole_search(10, 2), [](double) { return fake(1); }), InputError);
  EXPECT_THROW(bisect_capacity(whole_search(1.5, 2), [](double) { return fake(1); }), InputError);
  CapacitySearch tolerance = whole_search(1, 2);
  tolerance.tolerance = 0;
  EXPECT_THROW(check_capacity_search(tolerance), InputError);
  tolerance.tolerance = 1;
  EXPECT_THROW(check_capacity_search(tolerance), InputError);
}

class CapacityCommand : public test::TraceFolder {
 protected:
  CapacityCommand() : TraceFolder(test::kTwoBurstsTrace) {}
  test::CliResult capacity(const std::vector<std::string>& extra,
                           const std::string& folder = "cap") {
    return run_on_trace({"capacity"}, folder, extra);
  }
  // A figure of a plain recorded run with the test's flags.
  double run_figure(const std::vector<std::string>& flags, const std::string& key) {
    const std::string folder = "run" + std::to_string(++runs_);
    const auto r = run_on_trace({"run", "--recorded", "--per-request", "none"}, folder, flags);
    EXPECT_EQ(r.status, 0) << r.err;
    const auto summary = nlohmann::json::parse(test::read_file(dir_ / folder / "summary.json"));
    return summary[key].get<double>();
  }
  int runs_ = 0;
};

// The settings file's capacity section holds the search's keys and no other,
// and a figure only some runs have is named with what gives it.
TEST_F(CapacityCommand, RefusesAnUnknownCapacityKeyAndExplainsAFigureNotThere) {
  const std::string settings =
      test::write_file(dir_ / "search.json",
                       R"({"capacity": {"vary": "cores", "targte": "success_rate>=1"}})")
          .string();
  const auto typo = capacity({"--settings", settings});
  EXPECT_EQ(typo.status, 2);
  EXPECT_THAT(typo.err,
              HasSubstr("search.json: capacity.targte: unknown key (did you mean 'target'?)"));
  // A bad value of the section is told of its key in the file, not of a flag.
  const std::string bad_target =
      test::write_file(dir_ / "target.json",
                       R"({"capacity": {"vary": "cores", "target": "success_rate>>1"}})")
          .string();
  const auto target = capacity({"--settings", bad_target});
  EXPECT_EQ(target.status, 2);
  EXPECT_THAT(target.err, HasSubstr("target.json: capacity.target: "));
  EXPECT_THAT(target.err, ::testing::Not(HasSubstr("--target")));
  const auto goodput = capacity({"--vary", "cores", "--target", "good_request_fraction>=0.9"});
  EXPECT_EQ(goodput.status, 2);
  EXPECT_THAT(goodput.err, HasSubstr("'good_request_fraction' is a figure only of a run given "
                                     "--goodput"));
}

// Each mode searched apart, the retimed one too (the recorded requests at
// synthetic instants): its answer its own, in capacity.json and on the
// console.
TEST_F(CapacityCommand, TheRetimedModeGetsItsOwnAnswer) {
  const auto r = capacity({"--target", "success_rate>=1", "--vary", "cores", "--max", "16",
                           "--decode-budget", "0.02", "--modes", "recorded,retimed"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(test::read_file(dir_ / "cap" / "capacity.json"));
  ASSERT_TRUE(doc.contains("retimed"));
  EXPECT_FALSE(doc.contains("synthetic"));
  ASSERT_TRUE(doc["retimed"]["cores"].is_number_unsigned()) << doc.dump();
  EXPECT_EQ(doc["retimed"]["success_rate"], 1.0);
  EXPECT_THAT(r.out, HasSubstr("retimed   cores=" + doc["retimed"]["cores"].dump()));
}

// Prompts of 60,000 tokens take about 3 s to prefill on a replica of their
// own (8 chunks of at most 8192 tokens, BATCHING.md's default costs): a 1 s
// TTFT p99 is out of reach at any count, and capacity says why.
TEST_F(CapacityCommand, AnUnreachableTtftTargetIsExplainedByItsIdleBound) {
  const std::string trace = test::write_file(dir_ / "long.csv",
                                             "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                             "2024-01-01 00:00:00.000,60000,5\n"
                                             "2024-01-01 00:00:30.000,60000,5\n"
                                             "2024-01-01 00:01:00.000,60000,5\n")
                                .string();
  const test::CliResult r = test::run_cli(
      {"capacity", "--server", "batching", "--trace", trace, "--vary", "replicas", "--max", "4",
       "--target", "ttft_p99_s<=1", "--modes", "recorded", "--output", (dir_ / "idle").string()});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_THAT(r.out, HasSubstr("on idle replicas the ttft_p99_s would already be"));
  EXPECT_THAT(r.out, HasSubstr("past the target's 1.000 s: no count of replicas meets it"));
  const auto doc = nlohmann::json::parse(test::read_file(dir_ / "idle" / "capacity.json"));
  EXPECT_THAT(doc["recorded"]["reason"].get<std::string>(), HasSubstr("on idle replicas"));
}

// The idle bound is a floor no run can go below: a run's own TTFT percentile,
// as a target, is never said to be out of reach. Prompts that repeat one
// another's blocks (Mooncake's hash ids) are served from the prefix cache far
// faster than their own prefill, and prompts longer than max_model_len are
// rejected and in no TTFT: the bound counts both, in every mode.
TEST(CapacityIdleBound, IsNeverAboveWhatARunReaches) {
  const fs::path dir = test::fresh_dir();
  std::string jsonl;
  for (int i = 0; i < 60; ++i) {
    // A shared 16-block prefix of 512 tokens each; every fifth request its
    // own ids; every seventh past max_model_len (set to 20,000 below).
    const bool own = i % 5 == 0;
    const int tokens = i % 7 == 3 ? 30000 : 8192;
    std::string ids;
    for (int b = 0; b < tokens / 512; ++b)
      ids += (b == 0 ? "" : ",") + std::to_string(own ? 1000 * (i + 1) + b : b);
    jsonl += "{\"timestamp\": " + std::to_string(i * 700) +
             ", \"input_length\": " + std::to_string(tokens) +
             ", \"output_length\": 8, \"hash_ids\": [" + ids + "]}\n";
  }
  Settings settings;
  settings.server_kind = "batching";
  settings.trace_path = test::write_file(dir / "shared.jsonl", jsonl).string();
  settings.batching.replicas = 4;
  settings.batching.max_model_len = 20000;
  const LoadedTrace loaded = load_trace(settings);
  for (const std::string mode : {"recorded", "retimed", "synthetic"}) {
    for (const char* key : {"ttft_p50_s", "ttft_p99_s"}) {
      SCOPED_TRACE(mode + " " + key);
      const Summary summary = run_mode(settings, loaded.trace, mode).summary;
      const std::optional<double> reached = summary.get(key);
      ASSERT_TRUE(reached.has_value());
      const Target met = target_of(std::string(key) + "<=" + shortest(*reached));
      EXPECT_EQ(idle_bound_reason(settings, loaded.trace, mode, met), "");
      // Far below what the cache allows, the bound does say so.
      const Target never = target_of(std::string(key) + "<=0.0001");
      EXPECT_THAT(idle_bound_reason(settings, loaded.trace, mode, never),
                  HasSubstr("no count of replicas meets it"));
    }
  }
}

TEST_F(CapacityCommand, WholeAnswerMeetsTheTargetAndTheCoreBelowDoesNot) {
  // A tight decode budget: one core makes the bursts miss it.
  const auto r = capacity(
      {"--target", "success_rate>=1", "--vary", "cores", "--max", "16", "--decode-budget", "0.02"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(test::read_file(dir_ / "cap" / "capacity.json"));
  for (const char* mode : {"recorded", "synthetic"}) {
    ASSERT_TRUE(doc.contains(mode)) << mode;
    ASSERT_TRUE(doc[mode]["cores"].is_number_unsigned()) << doc.dump();
    EXPECT_EQ(doc[mode]["success_rate"], 1.0);
    if (!doc[mode]["below"].is_null()) {
      EXPECT_EQ(doc[mode]["below"]["cores"], doc[mode]["cores"].get<int>() - 1);
      EXPECT_LT(doc[mode]["below"]["success_rate"].get<double>(), 1.0);
    }
  }
  const int cores = doc["recorded"]["cores"].get<int>();
  ASSERT_GT(cores, 1) << "the trace should need more than one core";
  const auto at = [&](int c) {
    return run_figure({"--decode-budget", "0.02", "--cores", std::to_string(c)}, "success_rate");
  };
  EXPECT_EQ(at(cores), 1.0);
  EXPECT_LT(at(cores - 1), 1.0);
  EXPECT_EQ(doc["recorded"]["below"]["success_rate"].get<double>(), at(cores - 1));
  EXPECT_THAT(r.out, HasSubstr("recorded  cores=" + std::to_string(cores) + "  success_rate=1"));
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "cap" / "settings.json"));
  EXPECT_EQ(settings["capacity"]["target"], "success_rate>=1");
  EXPECT_EQ(settings["capacity"]["max"], 16);
}

TEST_F(CapacityCommand, RealAnswerIsWithinTheToleranceOfTheFirstThatMeets) {
  const auto r =
      capacity({"--target", "avg_wait_s<=0.5", "--vary", "mips-per-core", "--min", "10000", "--max",
                "1000000", "--tolerance", "0.01", "--modes", "recorded", "--cores", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(test::read_file(dir_ / "cap" / "capacity.json"));
  EXPECT_FALSE(doc.contains("synthetic"));
  const double answer = doc["recorded"]["mips-per-core"].get<double>();
  const double below = doc["recorded"]["below"]["mips-per-core"].get<double>();
  EXPECT_LT(below, answer);
  EXPECT_LE(answer - below, 0.01 * answer);
  const auto at = [&](double mips) {
    return run_figure({"--cores", "1", "--mips-per-core", shortest(mips)}, "avg_wait_s");
  };
  EXPECT_LE(at(answer), 0.5);
  EXPECT_GT(at(below), 0.5);
  EXPECT_EQ(doc["recorded"]["avg_wait_s"].get<double>(), at(answer));
}

TEST_F(CapacityCommand, SaysWhenEvenTheMaximumFailsAndExitsWithStatus4) {
  const auto r = capacity({"--target", "success_rate>=1", "--vary", "cores", "--max", "1",
                           "--modes", "recorded", "--decode-budget", "0.02"});
  ASSERT_EQ(r.status, 4) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("capacity: no value from 1 to 1 meets success_rate>=1 in every mode"));
  EXPECT_THAT(r.out, HasSubstr("not found: even the maximum, cores=1, fails the target (it "
                               "reached success_rate="));
  const auto doc = nlohmann::json::parse(test::read_file(dir_ / "cap" / "capacity.json"));
  EXPECT_TRUE(doc["recorded"]["cores"].is_null());
  EXPECT_EQ(doc["recorded"]["reason"],
            "even the maximum, cores=1, fails the target (it reached success_rate=" +
                printf_text("%.6g", doc["recorded"]["at_max"]["success_rate"].get<double>()) + ")");
  EXPECT_EQ(doc["recorded"]["at_max"]["cores"], 1);
  ASSERT_EQ(doc["recorded"]["steps"].size(), 1u);
  EXPECT_EQ(doc["recorded"]["steps"][0]["met"], false);
  EXPECT_TRUE(fs::exists(dir_ / "cap" / "capacity.csv"));
}

TEST_F(CapacityCommand, FewestReplicasIsTheFirstThatMeetsFromTheDefaultRange) {
  trace_ = test::write_file(dir_ / "burst.csv", test::kBurstTrace).string();
  // A small KV cache a replica keeps the 1024-replica run small.
  const std::vector<std::string> batching = {
      "--server",        "batching", "--ttft-budget", "0.3",
      "--decode-budget", "0.01",     "--kv-blocks",   "1024"};
  std::vector<std::string> args = {"--target", "success_rate>=1", "--vary",
                                   "replicas", "--modes",         "recorded"};
  args.insert(args.end(), batching.begin(), batching.end());
  const auto r = capacity(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto settings = nlohmann::json::parse(test::read_file(dir_ / "cap" / "settings.json"));
  EXPECT_EQ(settings["capacity"]["min"], 1);
  EXPECT_EQ(settings["capacity"]["max"], 1024);
  const auto doc = nlohmann::json::parse(test::read_file(dir_ / "cap" / "capacity.json"));
  const int replicas = doc["recorded"]["replicas"].get<int>();
  ASSERT_GT(replicas, 1) << doc.dump();
  const auto at = [&](int n) {
    std::vector<std::string> flags = batching;
    flags.insert(flags.end(), {"--replicas", std::to_string(n)});
    return run_figure(flags, "success_rate");
  };
  EXPECT_EQ(at(replicas), 1.0);
  EXPECT_LT(at(replicas - 1), 1.0);
  EXPECT_THAT(r.out, HasSubstr("recorded  replicas=" + std::to_string(replicas) +
                               "  success_rate=1  | at replicas=" + std::to_string(replicas - 1)));

  // Every run in the order run: the maximum, the minimum, then the halvings,
  // each met exactly when at or above the answer (the target is monotone here).
  const auto& steps = doc["recorded"]["steps"];
  ASSERT_EQ(steps.size(), doc["recorded"]["runs"].get<std::size_t>());
  ASSERT_GE(steps.size(), 3u);
  EXPECT_EQ(steps[0]["replicas"], 1024);
  EXPECT_EQ(steps[1]["replicas"], 1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i]["run"], i + 1);
    EXPECT_EQ(steps[i]["met"], steps[i]["replicas"].get<int>() >= replicas) << steps[i].dump();
    EXPECT_EQ(steps[i]["met"], steps[i]["success_rate"].get<double>() >= 1) << steps[i].dump();
  }
  // capacity.csv: the same runs, a row each, with every summary figure.
  const std::string csv = test::read_file(dir_ / "cap" / "capacity.csv");
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  EXPECT_THAT(header, testing::StartsWith("mode,run,replicas,met,requests,dropped,"));
  EXPECT_THAT(header, HasSubstr(",prefix_hit_rate,"));
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    rows.push_back(line);
  ASSERT_EQ(rows.size(), steps.size());
  EXPECT_THAT(rows[0], testing::StartsWith("recorded,1,1024,true,8,"));
  EXPECT_THAT(rows[1], testing::StartsWith("recorded,2,1,false,8,"));
  // The plots mark the answer.
  EXPECT_THAT(test::read_file(dir_ / "cap" / "plots" / "success_rate.gp"),
              HasSubstr("set arrow 1 from first " + std::to_string(replicas) + ", graph 0"));
}

TEST_F(CapacityCommand, PlotsNoneDrawsNone) {
  ASSERT_EQ(capacity({"--target", "success_rate>=1", "--vary", "cores", "--max", "8", "--modes",
                      "recorded", "--plots", "none"})
                .status,
            0);
  EXPECT_TRUE(fs::exists(dir_ / "cap" / "capacity.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "cap" / "plots"));
}

TEST_F(CapacityCommand, BadSearchesAreRefusedBeforeAnythingIsWritten) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--target", "success_rate>=1", "--vary", "devices"},
       "--min: required for --vary devices (only cores and replicas have a default range"},
      {{"--target", "sucess_rate>=1", "--vary", "cores"}, "did you mean success_rate?"},
      {{"--target", "success_rate>=1", "--vary", "core"},
       "unknown knob 'core' (did you mean cores?)"},
      {{"--target", "success_rate>=1", "--vary", "trace"}, "trace is not a numeric knob"},
      {{"--target", "success_rate>=1", "--vary", "router"}, "router is not a numeric knob"},
      {{"--target", "success_rate>=1", "--vary", "speedup"}, "give --vary time-scale"},
      {{"--target", "success_rate>=1", "--vary", "cores=1:8:1"}, "searches one knob"},
      {{"--target", "success_rate>=1", "--vary", "cores", "--min", "0"},
       "--min: --cores: must be a whole number from 1"},
      {{"--target", "success_rate>=1", "--vary", "cores", "--min", "9", "--max", "4"},
       "--min: 9 is above --max 4"},
      {{"--target", "success_rate>=1", "--vary", "cores", "--cores", "4"}, "also varied"},
      {{"--target", "success_rate>=1", "--vary", "time-scale", "--min", "0.5", "--max", "2",
        "--tolerance", "0"},
       "--tolerance: must be greater than 0"},
      {{"--vary", "cores"}, "--target: give the target"},
      {{"--target", "success_rate>=1"}, "--vary: name the knob"},
      {{"--target", "success_rate>=1", "--vary", "cores", "--plots", "png"}, "--plots"},
      {{"--target", "success_rate>=1", "--vary", "cores", "--per-request", "none"},
       "--per-request: a capacity search writes no requests.csv"},
      {{"--target", "success_rate>=1", "--vary", "cores", "--modes", "recorded", "--replications",
        "2"},
       "synthetic.replications: applies to the synthetic mode only"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = capacity(args);
    EXPECT_EQ(r.status, 2) << message;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_FALSE(fs::exists(dir_ / "cap")) << message;
  }
}

}  // namespace
}  // namespace infersim
