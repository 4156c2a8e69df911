// The same inputs give byte-identical run folders, but for the wall-clock
// time settings.json records.
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;

std::string without_written_at(const std::string& settings_json) {
  auto doc = nlohmann::ordered_json::parse(settings_json);
  EXPECT_TRUE(doc["meta"].contains("written_at"));
  doc["meta"].erase("written_at");
  return doc.dump(2);
}

TEST(Determinism, TwoRunsWriteIdenticalFiles) {
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::seed_trace();
  for (const char* name : {"a", "b"}) {
    const auto r = test::run_cli({"run", "--trace", trace, "--output", (dir / name).string()});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  for (const char* file :
       {"summary.json", "summary.csv", "recorded/requests.csv", "recorded/summary.json",
        "synthetic/requests.csv", "synthetic/summary.json"}) {
    const std::string a = test::read_file(dir / "a" / file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_EQ(a, test::read_file(dir / "b" / file)) << file;
  }
  EXPECT_EQ(without_written_at(test::read_file(dir / "a" / "settings.json")),
            without_written_at(test::read_file(dir / "b" / "settings.json")));
}

TEST(Determinism, ReplicationsDoNotDependOnTheThreadCount) {
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::seed_trace();
  for (const char* jobs : {"1", "2"}) {
    const auto r =
        test::run_cli({"run", "--trace", trace, "--replications", "3", "-j", jobs, "--per-request",
                       "none", "--plots", "none", "--output", (dir / jobs).string()});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  for (const char* file : {"summary.json", "summary.csv", "synthetic/replications.csv"}) {
    const std::string one = test::read_file(dir / "1" / file);
    EXPECT_FALSE(one.empty()) << file;
    EXPECT_EQ(one, test::read_file(dir / "2" / file)) << file;
  }
}

// Large enough that with two cores the reporters run on the second one.
TEST(Determinism, ThreadCountsDoNotChangeALargeRun) {
  const fs::path dir = test::fresh_dir();
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  std::uint64_t state = 7;
  for (int i = 0; i < 30000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int ms = (i / 1000) * 60000 + (i % 1000) * (i / 1000 % 2 == 0 ? 7 : 53);
    char line[96];
    std::snprintf(line, sizeof line, "2023-11-16 18:%02d:%02d.%03d0000,%llu,%llu\n",
                  ms / 60000 % 60, ms / 1000 % 60, ms % 1000,
                  static_cast<unsigned long long>(state >> 52),
                  static_cast<unsigned long long>(state >> 58));
    csv += line;
  }
  const std::string trace = test::write_file(dir / "t.csv", csv).string();
  for (const char* jobs : {"1", "2"}) {
    const auto r = test::run_cli({"run", "--trace", trace, "-j", jobs, "--plots", "none",
                                  "--output", (dir / jobs).string()});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  for (const char* file :
       {"summary.json", "summary.csv", "recorded/requests.csv", "recorded/timeseries.csv",
        "recorded/cdf.csv", "synthetic/requests.csv", "synthetic/timeseries.csv"}) {
    const std::string one = test::read_file(dir / "1" / file);
    EXPECT_FALSE(one.empty()) << file;
    EXPECT_EQ(one, test::read_file(dir / "2" / file)) << file;
  }
}

TEST(Determinism, SeparateProcessesAgreeToo) {
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::seed_trace();
  for (const char* name : {"a", "b"}) {
    const std::string command = std::string(INFERSIM_BINARY) + " run --trace " + trace +
                                " --time-resolution 1s --output " + (dir / name).string() +
                                " > /dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  EXPECT_EQ(test::read_file(dir / "a" / "requests.csv"),
            test::read_file(dir / "b" / "requests.csv"));
  EXPECT_EQ(test::read_file(dir / "a" / "summary.json"),
            test::read_file(dir / "b" / "summary.json"));
}

}  // namespace
}  // namespace infersim
