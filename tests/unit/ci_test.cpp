// CI's entry: .ci/run sets CI=true itself (warnings become errors, a test
// that cannot run fails instead of skipping) and runs exactly the README's
// second command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace infersim
