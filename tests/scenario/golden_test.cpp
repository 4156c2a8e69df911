// Golden run folders: each folder under tests/golden/ holds a small hand-made
// trace, the flags of its run (`args`, one per line) and the requests.csv and
// summary.json the run must write, byte for byte. tests/golden/regenerate
// rewrites them on purpose.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> cases() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "tests" / "golden")) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, RunWritesTheGoldenFiles) {
  const fs::path golden = test::source_dir() / "tests" / "golden" / GetParam();
  const fs::path out = test::fresh_dir(GetParam());
  std::vector<std::string> args = {"run",      "--recorded",
                                   "--trace",  (golden / "trace.csv").string(),
                                   "--output", (out / "run").string()};
  std::istringstream lines(test::read_file(golden / "args"));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) args.push_back(line);
  }
  const auto r = test::run_cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* file : {"requests.csv", "summary.json"}) {
    EXPECT_EQ(test::read_file(out / "run" / file), test::read_file(golden / file))
        << GetParam() << "/" << file
        << " differs; if the change is meant, run tests/golden/regenerate";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param; });

TEST(GoldenCases, ThereAreSome) {
  EXPECT_GE(cases().size(), 3u);
}

}  // namespace
}  // namespace infersim
