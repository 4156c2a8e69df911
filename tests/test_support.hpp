// Helpers shared by the tests: temporary files and folders, reading a file,
// running the command line in-process, and where the traces are.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.hpp"

// Skips the running test on a developer's machine, and fails it under CI,
// where a skip would pass the check it stands for silently:
//   if (!gnuplot_installed()) INFERSIM_SKIP_OR_FAIL("gnuplot is not installed");
// (the message may stream: "a " << b).
#define INFERSIM_SKIP_OR_FAIL(message)                                             \
  do {                                                                             \
    if (::infersim::test::under_ci()) {                                            \
      FAIL() << message << " (CI=true: a test that cannot run here is a failure)"; \
    } else {                                                                       \
      GTEST_SKIP() << message;                                                     \
    }                                                                              \
  } while (false)

namespace infersim::test {

inline std::filesystem::path source_dir() {
  return INFERSIM_SOURCE_DIR;
}

// Whether this is CI's run (CI=true, as .ci/run sets it): there a test that
// cannot run for want of a tool or a permission fails instead of skipping.
inline bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// The seed's trace, fetched by trace/fetch; a clear failure when missing.
inline std::string seed_trace() {
  const auto path = source_dir() / "trace" / "azure_llm_code_1h.csv";
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << path << " is missing: run trace/fetch (see README.md)";
  }
  return path.string();
}

// A fresh empty folder under the test temp dir, unique to the running test.
inline std::filesystem::path fresh_dir(const std::string& tag = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              ("infersim-" + std::string(info->test_suite_name()) + "-" +
                               info->name() + (tag.empty() ? "" : "-" + tag));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path write_file(const std::filesystem::path& path,
                                        const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return path;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// A CSV file the program wrote (no quoted cells), one map a row from the
// header's names to the cells.
inline std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& path) {
  std::istringstream text(read_file(path));
  auto cells_of = [](const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');)
      cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    return cells;
  };
  std::string line;
  std::getline(text, line);
  const std::vector<std::string> header = cells_of(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(text, line)) {
    const std::vector<std::string> cells = cells_of(line);
    EXPECT_EQ(cells.size(), header.size()) << path << ": " << line;
    std::map<std::string, std::string>& row = rows.emplace_back();
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i)
      row[header[i]] = cells[i];
  }
  return rows;
}

// Seconds as requests.csv prints them, with exactly nine decimals
// ("12.000000001"), read exactly as nanoseconds: no floating point between
// the file and the figure a test compares it with.
inline std::int64_t ns_of(const std::string& seconds) {
  const std::size_t dot = seconds.find('.');
  EXPECT_TRUE(dot != std::string::npos && seconds.size() - dot == 10)
      << "not nine decimals: '" << seconds << "'";
  if (dot == std::string::npos) return 0;
  const bool negative = !seconds.empty() && seconds.front() == '-';
  const std::int64_t whole = std::stoll(seconds.substr(negative ? 1 : 0, dot - (negative ? 1 : 0)));
  const std::int64_t ns = whole * 1'000'000'000 + std::stoll(seconds.substr(dot + 1));
  return negative ? -ns : ns;
}

struct CliResult {
  int status = 0;
  std::string out;
  std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int status = run_command_line(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace infersim::test
