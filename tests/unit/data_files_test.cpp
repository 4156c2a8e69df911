// The program's own files (settings/ and trace/) found from any folder: the
// current one first, then the source tree it was built from, then the
// install's data folder; and a missing trace named with where it was looked for.
#include "cli/data_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/plots.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;
namespace fs = std::filesystem;

TEST(DataFiles, TheBinaryRunsFromAnotherFolder) {
  test::seed_trace();
  const fs::path dir = test::fresh_dir();
  const ProgramRun r = run_program(
      {INFERSIM_BINARY, "run", "--recorded", "--settings", "settings/seed_1s_clock.json",
       "--per-request", "none", "--plots", "none", "--output", "out"},
      dir);
  ASSERT_TRUE(r.started) << r.error;
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string trace = (test::source_dir() / "trace" / "azure_llm_code_1h.csv").string();
  EXPECT_THAT(r.output, HasSubstr("Trace " + trace + ": azure-csv, calendar timestamps, 8819"));
  const auto settings = nlohmann::json::parse(test::read_file(dir / "out" / "settings.json"));
  EXPECT_EQ(settings["trace"]["path"], trace);
  // seed_1s_clock.json's clock.
  EXPECT_EQ(settings["run"]["time_resolution_s"], 1.0);
}

TEST(DataFiles, ACopyInTheCurrentFolderComesFirst) {
  const fs::path dir = test::fresh_dir();
  fs::create_directories(dir / "trace");
  test::write_file(dir / "trace" / "azure_llm_code_1h.csv",
                   "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-01-01 00:00:00,10,1\n"
                   "2024-01-01 00:00:01,20,2\n");
  const test::InFolder here(dir);
  const auto r = test::run_cli({"run", "--recorded", "--plots", "none", "--output", "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Trace trace/azure_llm_code_1h.csv: azure-csv, calendar "
                               "timestamps, 2 requests."));
}

TEST(DataFiles, AMissingTraceSaysWhereItLookedAndHowToFetchIt) {
  const fs::path dir = test::fresh_dir();
  const test::InFolder here(dir);
  const auto r = test::run_cli({"run", "--trace", "trace/not_fetched.csv", "--output", "out"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("trace/not_fetched.csv: cannot open the trace file"));
  EXPECT_THAT(r.err, HasSubstr((dir / "trace" / "not_fetched.csv").string()));
  EXPECT_THAT(r.err, HasSubstr((test::source_dir() / "trace" / "not_fetched.csv").string()));
  // A program in its build folder has no installed data folder to look in
  // (tests/install/install_test.sh checks the installed program's).
  EXPECT_THAT(r.err, HasSubstr("trace/fetch"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(DataFiles, OnlyTheProgramsOwnFoldersAreLookedUp) {
  const fs::path dir = test::fresh_dir();
  const test::InFolder here(dir);
  // The source tree has README.md, but a path outside settings/ and trace/ is
  // the user's: taken as given.
  EXPECT_EQ(find_data_file("README.md").path, "README.md");
  EXPECT_FALSE(find_data_file("README.md").found);
  const DataFile settings = find_data_file("settings/default.json");
  EXPECT_TRUE(settings.found);
  EXPECT_EQ(settings.path, (test::source_dir() / "settings" / "default.json").string());
  EXPECT_EQ(find_data_file((test::source_dir() / "settings" / "x.json").string()).looked.size(),
            1u);
}

}  // namespace
}  // namespace infersim
