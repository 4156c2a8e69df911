// CI's entry: .ci/run sets CI=true itself (warnings become errors, a test
// that cannot run fails instead of skipping) and runs exactly the README's
// second command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace infersim {
namespace {
using ::testing::HasSubstr;

constexpr const char* kSuiteCommand = ".ci/setup && ctest --test-dir build -j2 --output-on-failure";

TEST(Ci, RunSetsCiTrueItself) {
  const std::string run = test::read_file(test::source_dir() / ".ci" / "run");
  EXPECT_THAT(run, HasSubstr("export CI=true"));
}

TEST(Ci, RunIsTheReadmesSecondCommand) {
  const std::string run = test::read_file(test::source_dir() / ".ci" / "run");
  const std::string readme = test::read_file(test::source_dir() / "README.md");
  EXPECT_THAT(run, HasSubstr(kSuiteCommand));
  EXPECT_THAT(readme, HasSubstr(std::string("```sh\n") + kSuiteCommand + "\n```"));
}

// PASS_REGULAR_EXPRESSION makes CTest judge a test by its output alone and
// ignore its exit status, so a script that fails after printing the line
// would pass: every test, the examples' included, is judged by its exit.
TEST(Ci, NoTestPassesOnItsOutputAlone) {
  int read = 0;
  for (const char* folder : {"examples", "tests"}) {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(test::source_dir() / folder)) {
      const std::string name = entry.path().filename().string();
      if (name != "CMakeLists.txt" && !name.ends_with(".cmake")) continue;
      ++read;
      EXPECT_EQ(test::read_file(entry.path()).find("PASS_REGULAR_EXPRESSION"), std::string::npos)
          << entry.path() << " judges a test by its output alone";
    }
  }
  EXPECT_GE(read, 2);
}

}  // namespace
}  // namespace infersim
