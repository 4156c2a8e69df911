// A knob added as one row: a made-up knob of the batching section, declared
// here the way a server's own rows are declared beside their struct
// (model/batching_knobs.cpp), is found in the flags and their help, read
// from a settings file and from its flag with its bounds checked, written
// into settings.json, settable by a fleet's class, and shown on the report
// page. Its own executable, so that no other test sees the row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/run_options.hpp"
#include "model/batching_knobs.hpp"
#include "scenario/settings.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Where the made-up knob keeps its value: a real row names a member of its
// struct; a test's row has no struct of its own.
double made_up_value_s = 0.25;

// Registered before main, as a kind outside the table would register its rows.
const bool kRegistered = [] {
  Knob<BatchingKnobs> row;
  row.key = "made_up_delay_s";
  row.set = [](BatchingKnobs&, const nlohmann::json& v, const std::string& src,
               const std::string& l) { made_up_value_s = json_check::at_least(v, 0, src, l); };
  row.get = [](const BatchingKnobs&) { return nlohmann::ordered_json(made_up_value_s); };
  add_batching_knob_row(row.help("batching: a made-up delay of every step, s")
                            .label("A made-up delay", " s")
                            .per_class());
  return true;
}();

class MadeUpKnob : public test::TraceFolder {
 protected:
  MadeUpKnob() : TraceFolder(test::kBurstTrace) {}
  test::CliResult run(const std::vector<std::string>& extra, const std::string& folder = "run") {
    return run_on_trace({"run", "--plots", "none"}, folder, extra);
  }
};

TEST_F(MadeUpKnob, IsAFlagWithItsHelpAndDefault) {
  ASSERT_TRUE(kRegistered);
  const KnobFlag* flag = find_knob_flag("made-up-delay-s");
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(std::string(flag->key), "batching.made_up_delay_s");
  // The help as one line of words (Program_options wraps it to the terminal).
  std::istringstream in(test::run_cli({"run", "--help"}).out);
  std::string help, word;
  while (in >> word)
    help += word + " ";
  EXPECT_THAT(help, HasSubstr("--made-up-delay-s arg batching: a made-up delay of every step, s "
                              "(0.25)"));
}

TEST_F(MadeUpKnob, IsReadCheckedWrittenAndShown) {
  test::write_file(dir_ / "s.json", R"({"batching": {"made_up_delay_s": 1.5}})");
  made_up_value_s = 0.25;
  ASSERT_EQ(run({"--server", "batching", "--settings", (dir_ / "s.json").string()}).status, 0);
  EXPECT_EQ(made_up_value_s, 1.5);
  const auto written = nlohmann::json::parse(test::read_file(dir_ / "run" / "settings.json"));
  EXPECT_EQ(written["batching"]["made_up_delay_s"], 1.5);
  EXPECT_THAT(test::read_file(dir_ / "run" / "report.html"), HasSubstr("A made-up delay"));
  // The flag over the file, and the row's bound on both.
  ASSERT_EQ(run({"--server", "batching", "--made-up-delay-s", "2"}, "flag").status, 0);
  EXPECT_EQ(made_up_value_s, 2);
  EXPECT_THAT(test::one_error_line(run({"--server", "batching", "--made-up-delay-s", "-1"}, "low")),
              HasSubstr("--made-up-delay-s: must be at least 0.0, got -1.0"));
  test::write_file(dir_ / "bad.json", R"({"batching": {"made_up_delay_s": "soon"}})");
  EXPECT_THAT(test::one_error_line(
                  run({"--server", "batching", "--settings", (dir_ / "bad.json").string()}, "bad")),
              HasSubstr("batching.made_up_delay_s: expected a number, got \"soon\""));
}

TEST_F(MadeUpKnob, AFleetClassMaySetIt) {
  Settings settings;
  settings.server_kind = "batching";
  apply_settings_json(
      settings,
      nlohmann::json::parse(R"({"batching": {"fleet": [{"name": "a", "made_up_delay_s": 3}]}})"),
      "fleet.json");
  EXPECT_EQ(fleet_classes(settings).size(), 1u);
  EXPECT_EQ(made_up_value_s, 3);
}

}  // namespace
}  // namespace infersim
