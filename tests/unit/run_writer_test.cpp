#include "report/run_writer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario/scenario.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;

ModeResult run_to_write() {
  Settings settings;
  settings.cores = 1;
  RequestList tasks(settings.request_knobs());
  for (int i = 0; i < 10; ++i)
    tasks.add(SimTime::from_seconds(i), 500, 3);
  return simulate(settings, "recorded", std::move(tasks), SimTime::from_seconds(20), 0, false);
}

TEST(RunWriter, PutsEachPartOfACallersSectionWhereItBelongs) {
  const std::filesystem::path dir = test::fresh_dir();
  const RunFolder folder = RunFolder::prepare((dir / "run").string(), "recorded", false);
  const ModeResult run = run_to_write();
  RunSection section;
  section.mode = "recorded";
  section.key = "extra";
  section.summary["answer"] = 42;
  bool asked_for_plots = true;
  section.write_files = [&asked_for_plots](const std::filesystem::path& at, bool plots,
                                           PlotRendering&) {
    test::write_file(at / "extra.txt", "its own file\n");
    asked_for_plots = plots;
    return std::vector<PlotScript>{};
  };
  section.page = {"extra", "Extra", "<p>Its own words.</p>\n", {}};
  ReportOptions options;
  options.plots = false;
  options.sections.push_back(section);
  write_run(folder, nlohmann::ordered_json::object(), {&run}, false, options);

  EXPECT_FALSE(asked_for_plots);
  EXPECT_EQ(test::read_file(dir / "run" / "extra.txt"), "its own file\n");
  const nlohmann::json summary =
      nlohmann::json::parse(test::read_file(dir / "run" / "summary.json"));
  EXPECT_EQ(summary["extra"]["answer"], 42);
  EXPECT_THAT(test::read_file(dir / "run" / "report.html"),
              HasSubstr("<section id=\"extra\">\n<h2>Extra</h2>\n<p>Its own words.</p>\n"
                        "</section>\n"));
}

TEST(RunWriter, LeavesTheOtherModesSummariesAlone) {
  const std::filesystem::path dir = test::fresh_dir();
  const RunFolder folder = RunFolder::prepare((dir / "run").string(), "synthetic", false);
  ModeResult run = run_to_write();
  run.mode = "synthetic";
  RunSection section;
  section.mode = "recorded";
  section.key = "extra";
  section.summary["answer"] = 42;
  section.write_files = [](const std::filesystem::path&, bool, PlotRendering&) {
    return std::vector<PlotScript>{};
  };
  ReportOptions options;
  options.plots = false;
  options.sections.push_back(section);
  write_run(folder, nlohmann::ordered_json::object(), {&run}, false, options);
  const nlohmann::json summary =
      nlohmann::json::parse(test::read_file(dir / "run" / "summary.json"));
  EXPECT_FALSE(summary.contains("extra"));
}

}  // namespace
}  // namespace infersim
