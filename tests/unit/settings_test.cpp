// Unit tests of scenario/settings: the seed scenario's defaults, settings files
// holding any subset of keys, and the errors for unknown keys, wrong types and
// impossible values (all `FILE: FIELD: what` InputErrors).
#include "scenario/settings.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "core/input_error.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using json = nlohmann::json;

using test::error_of;

// Applies a settings document (given as JSON text) to default settings and
// returns the error it must raise.
std::string json_error(const std::string& document) {
  Settings settings;
  return error_of([&] { apply_settings_json(settings, json::parse(document), "test.json"); });
}

// Each test's files in a folder of its own (test::temp_file).
class SettingsFile : public ::testing::Test {
 protected:
  std::string write_temp_file(const std::string& stem, const std::string& bytes) {
    return test::temp_file(stem, bytes, ".json").string();
  }
};

TEST(Settings, DefaultsAreTheSeedScenario) {
  const Settings s;
  EXPECT_EQ(s.devices, 50u);
  EXPECT_FALSE(s.duration_s.has_value());
  EXPECT_EQ(s.seed, 42u);
  EXPECT_EQ(s.time_resolution_s, 0.0);
  EXPECT_EQ(s.time_scale, 1.0);
  EXPECT_EQ(s.bytes_per_token, 4.0);
  EXPECT_EQ(s.mi_per_context_token, 12.0);
  EXPECT_EQ(s.mi_per_generated_token, 2000.0);
  EXPECT_EQ(s.ttft_budget_s, 2.0);
  EXPECT_EQ(s.decode_budget_s, 0.1);
  EXPECT_EQ(s.cores, 8u);
  EXPECT_EQ(s.mips_per_core, 60000.0);
  EXPECT_EQ(s.idle_power_w, 420.0);
  EXPECT_EQ(s.max_power_w, 720.0);
  ASSERT_EQ(s.hops.size(), 2u);
  EXPECT_EQ(s.hops[0].name, "wifi");
  EXPECT_EQ(s.hops[0].latency_s, 0.005);
  EXPECT_EQ(s.hops[0].bandwidth_mbps, 1300.0);
  EXPECT_EQ(s.hops[1].name, "man");
  EXPECT_EQ(s.hops[1].latency_s, 0.010);
  EXPECT_EQ(s.hops[1].bandwidth_mbps, 1000.0);
  EXPECT_EQ(s.device_tx_nj_per_bit, 283.17);
  EXPECT_EQ(s.device_rx_nj_per_bit, 137.01);
  EXPECT_EQ(s.trace_format, "auto");
  EXPECT_FALSE(s.trace_sha256.has_value());
  EXPECT_EQ(s.per_request, "csv");
}

TEST(Settings, CommittedDefaultFileHoldsTheDefaults) {
  // settings/default.json documents every key with its default value.
  const std::string path = std::string(INFERSIM_SOURCE_DIR) + "/settings/default.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot open " << path;
  const json committed = json::parse(in);
  EXPECT_EQ(committed, json::parse(settings_to_json(Settings{}).dump()));
  Settings settings;
  apply_settings_file(settings, path);
  EXPECT_EQ(settings_to_json(settings).dump(), settings_to_json(Settings{}).dump());
}

TEST(Settings, DefaultsPassValidation) {
  const Settings s;
  EXPECT_NO_THROW(validate_settings(s, "defaults"));
}

TEST(Settings, KnobsCarryTheSettings) {
  const Settings s;
  const EnergyKnobs energy = s.energy_knobs();
  const EdgeServerKnobs edge = s.edge_knobs();
  EXPECT_EQ(edge.cores, s.cores);
  const std::tuple<const char*, double, double> carried[] = {
      {"mi_per_context_token", edge.mi_per_context_token, s.mi_per_context_token},
      {"mi_per_generated_token", edge.mi_per_generated_token, s.mi_per_generated_token},
      {"mips_per_core", edge.mips_per_core, s.mips_per_core},
      {"idle_power_w", edge.idle_power_w, s.idle_power_w},
      {"max_power_w", edge.max_power_w, s.max_power_w},
      {"device_tx_nj_per_bit", energy.device_tx_nj_per_bit, s.device_tx_nj_per_bit},
      {"device_rx_nj_per_bit", energy.device_rx_nj_per_bit, s.device_rx_nj_per_bit},
  };
  for (const auto& [name, knob, setting] : carried)
    EXPECT_EQ(knob, setting) << name;
}

TEST(Settings, KeysAreListedInFileOrder) {
  const std::vector<std::string>& keys = settings_keys();
  ASSERT_FALSE(keys.empty());
  EXPECT_EQ(keys.front(), "run.mode");
  // each section's keys stand together, as the file writes them
  std::vector<std::string> sections;
  for (const std::string& key : keys) {
    const std::string section = key.substr(0, key.find('.'));
    if (sections.empty() || sections.back() != section) {
      EXPECT_EQ(std::find(sections.begin(), sections.end(), section), sections.end()) << section;
      sections.push_back(section);
    }
  }
  EXPECT_NE(std::find(keys.begin(), keys.end(), "output.per_request"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "server.cores"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "network.hops"), keys.end());
}

TEST_F(SettingsFile, SubsetFileChangesOnlyItsKeys) {
  const std::string path =
      write_temp_file("subset",
                      "{\n"
                      "  \"server\": {\"cores\": 16, \"mips_per_core\": 1e5},\n"
                      "  \"deadline\": {\"decode_budget_s\": 0.5}\n"
                      "}\n");
  Settings settings;
  apply_settings_file(settings, path);
  EXPECT_EQ(settings.cores, 16u);
  EXPECT_EQ(settings.mips_per_core, 100000.0);
  EXPECT_EQ(settings.decode_budget_s, 0.5);

  // Everything else is still the default: compare the whole documents.
  nlohmann::ordered_json expected = settings_to_json(Settings{});
  expected["server"]["cores"] = 16;
  expected["server"]["mips_per_core"] = 100000.0;
  expected["deadline"]["decode_budget_s"] = 0.5;
  EXPECT_EQ(settings_to_json(settings).dump(), expected.dump());
}

TEST_F(SettingsFile, SeedOneSecondClockStyleFileSetsTheResolution) {
  const std::string path = write_temp_file("clock", R"({"run": {"time_resolution_s": 1}})");
  Settings settings;
  apply_settings_file(settings, path);
  EXPECT_EQ(settings.time_resolution_s, 1.0);
  EXPECT_EQ(settings.devices, 50u);
  EXPECT_EQ(settings.cores, 8u);
}

// A settings document `apply_settings_json` refuses, read as test.json: the
// error starts with `starts` (when given), holds every one of `has`, and not
// `lacks` (when given).
struct RefusedDocument {
  const char* name;
  const char* document;
  const char* starts;
  std::vector<std::string> has;
  const char* lacks = nullptr;
};

TEST(Settings, RefusedDocumentsNameTheKeyAndWhy) {
  const RefusedDocument cases[] = {
      {"an unknown key is named with the nearest known key",
       R"({"server": {"core": 4}})",
       "test.json: server.core: unknown key",
       {"did you mean 'server.cores'?"}},
      {"an unknown key far from every key has no suggestion",
       R"({"server": {"frobnication_level": 4}})",
       nullptr,
       {"server.frobnication_level: unknown key"},
       "did you mean"},
      {"an unknown section is named with the nearest section",
       R"({"sever": {"cores": 4}})",
       "test.json: sever: unknown section",
       {"did you mean 'server'?"}},
      {"a key without its section is named with the section it belongs in",
       R"({"cores": 4})",
       "test.json: cores: unknown section",
       {"did you mean 'server.cores', as {\"server\": {\"cores\": ...}}?"}},
      {"a misspelt key without its section",
       R"({"mips_per_cor": 4})",
       nullptr,
       {"did you mean 'server.mips_per_core'"}},
      {"a section name far from every key", R"({"zzzzzzzz": 4})", nullptr, {}, "did you mean"},
      {"a section that is not an object",
       R"({"server": 8})",
       nullptr,
       {"server: expected an object of keys"}},
      {"a document that is not an object",
       "[1, 2]",
       nullptr,
       {"expected a JSON object of sections"}},
      {"a string for cores",
       R"({"server": {"cores": "8"}})",
       "test.json: server.cores: ",
       {"expected a whole number, got \"8\""}},
      {"a string for a real knob",
       R"({"server": {"mips_per_core": "fast"}})",
       nullptr,
       {"server.mips_per_core: expected a number, got \"fast\""}},
      {"zero cores",
       R"({"server": {"cores": 0}})",
       "test.json: server.cores: ",
       {"must be a whole number from 1", "got 0"}},
      {"negative cores",
       R"({"server": {"cores": -2}})",
       nullptr,
       {"server.cores: must be a whole number from 1"}},
      {"negative MIPS",
       R"({"server": {"mips_per_core": -60000}})",
       "test.json: server.mips_per_core: ",
       {"must be greater than 0"}},
      {"zero MIPS",
       R"({"server": {"mips_per_core": 0}})",
       nullptr,
       {"server.mips_per_core: must be greater than 0"}},
      {"fractional devices",
       R"({"run": {"devices": 2.5}})",
       "test.json: run.devices: ",
       {"expected a whole number, got 2.5"}},
      {"a negative budget",
       R"({"deadline": {"ttft_budget_s": -1}})",
       nullptr,
       {"deadline.ttft_budget_s: must be at least 0"}},
      {"a duration too long for the nanosecond clock",
       R"({"run": {"duration_s": 1e10}})",
       nullptr,
       {"run.duration_s: 10000000000.0 s does not fit the nanosecond clock"}},
      {"a choice outside the list",
       R"({"output": {"per_request": "parquet"}})",
       nullptr,
       {"output.per_request: must be csv or none, got \"parquet\""}},
      {"a digest that is not 64 lower-case hex digits",
       R"({"trace": {"sha256": "ABC"}})",
       nullptr,
       {"trace.sha256: expected 64 lower-case hex digits"}},
      {"a maximum power below the idle power names the maximum",
       R"({"server": {"max_power_w": 300}})",
       "test.json: server.max_power_w: ",
       {"must be at least server.idle_power_w", "420", "300"}},
      {"a hop without bandwidth",
       R"({"network": {"hops": [{"name": "wifi", "latency_s": 0.005}]}})",
       "test.json: network.hops[0].bandwidth_mbps: ",
       {"missing"}},
      {"a hop without latency",
       R"({"network": {"hops": [{"name": "a", "latency_s": 0, "bandwidth_mbps": 1},
                                {"name": "b", "bandwidth_mbps": 10}]}})",
       nullptr,
       {"network.hops[1].latency_s: missing"}},
      {"a hop with zero bandwidth",
       R"({"network": {"hops": [{"name": "wifi", "latency_s": 0.005, "bandwidth_mbps": 0}]}})",
       "test.json: network.hops[0].bandwidth_mbps: ",
       {"must be greater than 0"}},
      {"a hop's unknown key is named with the nearest",
       R"({"network": {"hops": [{"latency_s": 0, "bandwith_mbps": 5}]}})",
       nullptr,
       {"network.hops[0].bandwith_mbps: unknown key (did you mean 'bandwidth_mbps'?)"}},
      {"hops that are not a list",
       R"({"network": {"hops": {"name": "wifi"}}})",
       nullptr,
       {"network.hops: expected a list"}},
      {"a hop that is not an object",
       R"({"network": {"hops": [5]}})",
       nullptr,
       {"network.hops[0]: expected an object"}},
  };
  for (const RefusedDocument& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string message = json_error(c.document);
    if (c.starts != nullptr) {
      EXPECT_THAT(message, StartsWith(c.starts));
    }
    for (const std::string& part : c.has)
      EXPECT_THAT(message, HasSubstr(part));
    if (c.lacks != nullptr) {
      EXPECT_THAT(message, Not(HasSubstr(c.lacks)));
    }
  }
}

TEST(Settings, WholeNumbersWrittenAsRealsAreAccepted) {
  Settings s;
  apply_settings_json(s, json::parse(R"({"run": {"devices": 8.0}, "server": {"cores": 2e1}})"),
                      "test.json");
  EXPECT_EQ(s.devices, 8u);
  EXPECT_EQ(s.cores, 20u);
}

TEST(Settings, DurationNullMeansUntilTheLastArrival) {
  Settings settings;
  apply_settings_json(settings, json::parse(R"({"run": {"duration_s": 3600}})"), "a.json");
  ASSERT_TRUE(settings.duration_s.has_value());
  EXPECT_EQ(*settings.duration_s, 3600.0);
  apply_settings_json(settings, json::parse(R"({"run": {"duration_s": null}})"), "b.json");
  EXPECT_FALSE(settings.duration_s.has_value());
}

TEST(Settings, Sha256OfSixtyFourLowerCaseHexDigitsIsKept) {
  Settings settings;
  const std::string digest(64, 'a');
  apply_settings_json(settings, json{{"trace", {{"sha256", digest}}}}, "ok.json");
  EXPECT_EQ(settings.trace_sha256, digest);
}

TEST(Settings, MaxPowerIsCheckedAfterEveryKeyOfTheFile) {
  // Raising both in one file is fine, although in either order of reading one
  // of them alone would break max >= idle against the defaults (420, 720).
  Settings settings;
  apply_settings_json(settings,
                      json::parse(R"({"server": {"max_power_w": 900, "idle_power_w": 800}})"),
                      "test.json");
  EXPECT_EQ(settings.max_power_w, 900.0);
  EXPECT_EQ(settings.idle_power_w, 800.0);
}

TEST(Settings, ValidateSettingsRefusesMaxPowerBelowIdle) {
  Settings settings;
  settings.max_power_w = 100;
  const std::string message = error_of([&] { validate_settings(settings, "cli"); });
  EXPECT_THAT(message, StartsWith("cli: server.max_power_w: must be at least"));
}

TEST(Settings, HopsListReplacesTheDefaultPath) {
  Settings settings;
  apply_settings_json(
      settings,
      json::parse(
          R"({"network": {"hops": [{"name": "fiber", "latency_s": 0.002, "bandwidth_mbps": 10000}]}})"),
      "test.json");
  ASSERT_EQ(settings.hops.size(), 1u);
  EXPECT_EQ(settings.hops[0].name, "fiber");
  EXPECT_EQ(settings.hops[0].latency_s, 0.002);
  EXPECT_EQ(settings.hops[0].bandwidth_mbps, 10000.0);
}

TEST(Settings, DefaultsRoundTripThroughJsonUnchanged) {
  const std::string first = settings_to_json(Settings{}).dump();
  Settings read_back;
  apply_settings_json(read_back, json::parse(first), "round.json");
  EXPECT_EQ(settings_to_json(read_back).dump(), first);
}

TEST(Settings, ChangedSettingsRoundTripThroughJsonUnchanged) {
  Settings s;
  s.devices = 7;
  s.duration_s = 123.456;
  s.seed = 18'446'744'073'709'551'615u;  // the largest seed
  s.time_resolution_s = 1;
  s.time_scale = 0.1;
  s.bytes_per_token = 2;
  s.mi_per_context_token = 12.5;
  s.mi_per_generated_token = 1000;
  s.ttft_budget_s = 1.5;
  s.decode_budget_s = 0.05;
  s.cores = 3;
  s.mips_per_core = 12345.678;
  s.idle_power_w = 100;
  s.max_power_w = 100;
  s.hops = {{"fiber", 0.0001, 0.3}, {"core", 0.1, 40000}, {"edge", 0, 1}};
  s.device_tx_nj_per_bit = 1.0 / 3.0;
  s.device_rx_nj_per_bit = 0;
  s.trace_path = "elsewhere/trace.csv";
  s.trace_format = "azure-csv";
  s.trace_sha256 = std::string(64, 'f');
  s.per_request = "none";

  const std::string first = settings_to_json(s).dump();
  Settings read_back;
  apply_settings_json(read_back, json::parse(first), "round.json");
  EXPECT_EQ(settings_to_json(read_back).dump(), first);
  EXPECT_EQ(read_back.device_tx_nj_per_bit, 1.0 / 3.0);
  EXPECT_EQ(read_back.seed, 18'446'744'073'709'551'615u);
  EXPECT_EQ(read_back.trace_sha256, std::string(64, 'f'));
  EXPECT_NE(first, settings_to_json(Settings{}).dump());
}

TEST(Settings, MetaSectionIsIgnored) {
  Settings settings;
  apply_settings_json(settings,
                      json::parse(R"({"meta": {"author": "someone", "cores": "not checked"},
                                      "server": {"cores": 4}})"),
                      "test.json");
  EXPECT_EQ(settings.cores, 4u);
  nlohmann::ordered_json expected = settings_to_json(Settings{});
  expected["server"]["cores"] = 4;
  EXPECT_EQ(settings_to_json(settings).dump(), expected.dump());
}

TEST(Settings, SetSettingNamesTheFlagItCameFrom) {
  Settings settings;
  set_setting(settings, "server.cores", json(16), "", "--cores");
  EXPECT_EQ(settings.cores, 16u);
  EXPECT_EQ(error_of([&] { set_setting(settings, "server.cores", json(0), "", "--cores"); }),
            "--cores: must be a whole number from 1 to 1000000, got 0");
  EXPECT_EQ(settings.cores, 16u) << "a refused value must leave the setting alone";
}

// A settings file `apply_settings_file` refuses: the error starts with the
// file's path and `after_path`, and holds `has` (when given).
struct RefusedFile {
  const char* name;
  const char* text;
  const char* after_path;
  const char* has = nullptr;
};

TEST_F(SettingsFile, RefusedFilesNameTheFileAndLine) {
  const RefusedFile cases[] = {
      {"a JSON syntax error names the file and line",
       "{\n"
       "  \"server\": {\n"
       "    \"cores\": 8,,\n"
       "    \"mips_per_core\": 60000\n"
       "  }\n"
       "}\n",
       ":3: ", "syntax error"},
      {"a JSON syntax error on the first line is on line one", "{\"server\" {\"cores\": 8}}\n",
       ":1: "},
      // The input ends after the third newline, on (empty) line 4.
      {"a truncated file is a syntax error where the input ends",
       "{\n"
       "  \"server\": {\n"
       "    \"cores\": 8\n",
       ":4: ", "unexpected end of input"},
      {"an error in a file names the file", R"({"server": {"core": 4}})",
       ": server.core: unknown key", "did you mean 'server.cores'?"},
  };
  for (const RefusedFile& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = write_temp_file("refused", c.text);
    Settings settings;
    const std::string message = error_of([&] { apply_settings_file(settings, path); });
    EXPECT_THAT(message, StartsWith(path + c.after_path));
    if (c.has != nullptr) {
      EXPECT_THAT(message, HasSubstr(c.has));
    }
  }
}

TEST(Settings, MissingSettingsFileIsNamed) {
  const std::string path = ::testing::TempDir() + "infersim_no_such_dir/settings.json";
  Settings settings;
  EXPECT_EQ(error_of([&] { apply_settings_file(settings, path); }),
            path + ": cannot open the settings file");
}

TEST(Nearest, FindsTheKeyOneEditAway) {
  EXPECT_EQ(nearest("server.core", settings_keys()), "server.cores");
  EXPECT_EQ(nearest("run.devies", settings_keys()), "run.devices");
  EXPECT_EQ(nearest("server.idle_power", settings_keys()), "server.idle_power_w");
}

TEST(Nearest, PrefersTheCloserCandidate) {
  EXPECT_EQ(nearest("devics", {"device_count", "devices", "seed"}), "devices");
  EXPECT_EQ(nearest("cores", {"cars", "cored"}), "cored");
}

TEST(Nearest, ReturnsNothingForFarWords) {
  EXPECT_EQ(nearest("yesterday", settings_keys()), std::nullopt);
  EXPECT_EQ(nearest("zzzzzz", {"cores", "devices"}), std::nullopt);
  EXPECT_EQ(nearest("abc", {"xyz"}), std::nullopt);
}

TEST(Nearest, ReturnsNothingWithoutCandidates) {
  EXPECT_EQ(nearest("cores", {}), std::nullopt);
}

}  // namespace
}  // namespace infersim

namespace infersim {
namespace {

TEST(SettingsFiles, CommittedSeedClockFileSetsOneSecondOnly) {
  Settings s;
  apply_settings_file(s, std::string(INFERSIM_SOURCE_DIR) + "/settings/seed_1s_clock.json");
  EXPECT_EQ(s.time_resolution_s, 1);
  Settings expected;
  expected.time_resolution_s = 1;
  EXPECT_EQ(settings_to_json(s).dump(), settings_to_json(expected).dump());
}

}  // namespace
}  // namespace infersim
