// The same inputs give byte-identical run folders, but for the wall-clock
// time settings.json records.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"
#include "test_support.hpp"
#include "trace/azure_csv_reader.hpp"

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

// The seed's hour tiled to a million requests (copy k shifted by k x (the
// hour's span + 1 s), as tests/bench/tile_trace does), written as an Azure
// file: large enough that two threads read it and select the percentiles.
struct Tiled {
  std::string path;
  std::int64_t compute_ns = 0;  // Σ exec, MODEL.md section 5, worked out here
};
Tiled tile_seed_trace(const fs::path& dir, std::size_t n) {
  const Trace hour = read_azure_csv(test::seed_trace(), 1);
  const std::int64_t period = hour.records.back().offset_ns + 1'000'000'000;
  // 2023-11-16 18:17:03.9799600, the hour's first timestamp, in ns of the day.
  const std::int64_t origin = ((18 * 60 + 17) * 60 + 3) * 1'000'000'000LL + 979'960'000;
  Tiled tiled;
  tiled.path = (dir / "tiled.csv").string();
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (std::size_t i = 0; i < n; ++i) {
    const TraceRecord& r = hour.records[i % hour.records.size()];
    const std::int64_t t =
        origin + static_cast<std::int64_t>(i / hour.records.size()) * period + r.offset_ns;
    const std::int64_t day = t / 86'400'000'000'000LL, in_day = t % 86'400'000'000'000LL;
    char line[96];
    std::snprintf(
        line, sizeof line, "2023-11-%02lld %02lld:%02lld:%02lld.%07lld,%u,%u\n",
        static_cast<long long>(16 + day), static_cast<long long>(in_day / 3'600'000'000'000LL),
        static_cast<long long>(in_day / 60'000'000'000LL % 60),
        static_cast<long long>(in_day / 1'000'000'000 % 60),
        static_cast<long long>(in_day % 1'000'000'000 / 100), r.context_tokens, r.generated_tokens);
    csv += line;
    // exec = llround((c * 12 + g * 2000) / 60000 * 1e9), the default knobs.
    tiled.compute_ns +=
        std::llround((r.context_tokens * 12.0 + r.generated_tokens * 2000.0) / 60000 * 1e9);
  }
  test::write_file(tiled.path, csv);
  return tiled;
}

// Each path that threads take, forced: the Azure file read in two halves on
// two threads or on one, the percentiles selected on two threads or on one
// (-j 2 and -j 1 ask for them whatever the machine has): the same run folder
// byte for byte, the run's compute the sum worked out from the trace.
TEST(Determinism, OneOrTwoThreadsGiveTheSameMillionRequestRun) {
  constexpr std::size_t kRequests = 1'000'000;
  const fs::path dir = test::fresh_dir();
  const Tiled tiled = tile_seed_trace(dir, kRequests);
  Settings settings;
  settings.trace_path = tiled.path;
  const LoadedTrace one = load_trace(settings, 1);
  const LoadedTrace two = load_trace(settings, 2);
  EXPECT_EQ(one.trace.read_threads, 1u);
  EXPECT_EQ(two.trace.read_threads, 2u);
  ASSERT_EQ(one.trace.records.size(), kRequests);
  ASSERT_EQ(two.trace.records.size(), kRequests);
  for (std::size_t i = 0; i < kRequests; ++i) {
    ASSERT_EQ(one.trace.records[i].offset_ns, two.trace.records[i].offset_ns) << i;
    ASSERT_EQ(one.trace.records[i].context_tokens, two.trace.records[i].context_tokens) << i;
  }

  for (const char* jobs : {"1", "2"}) {
    const auto r = test::run_cli({"run", "--recorded", "--trace", tiled.path, "-j", jobs, "--plots",
                                  "none", "--output", (dir / jobs).string()});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  for (const char* file :
       {"summary.json", "summary.csv", "requests.csv", "timeseries.csv", "cdf.csv"}) {
    const std::string a = test::read_file(dir / "1" / file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_TRUE(a == test::read_file(dir / "2" / file)) << file;
  }
  const auto summary = nlohmann::json::parse(test::read_file(dir / "1" / "summary.json"));
  EXPECT_EQ(summary["requests"], kRequests);
  EXPECT_EQ(summary["compute_s"].get<double>(), static_cast<double>(tiled.compute_ns) / 1e9);
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
