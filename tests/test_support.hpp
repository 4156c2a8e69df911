// Helpers shared by the tests: temporary files and folders, reading a file,
// running the command line in-process, and where the traces are.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.hpp"

namespace infersim::test {

inline std::filesystem::path source_dir() {
  return INFERSIM_SOURCE_DIR;
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

// Makes `dir` the current folder until it goes, then the one before again.
class InFolder {
 public:
  explicit InFolder(const std::filesystem::path& dir) : before_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~InFolder() { std::filesystem::current_path(before_); }
  InFolder(const InFolder&) = delete;
  InFolder& operator=(const InFolder&) = delete;

 private:
  std::filesystem::path before_;
};

}  // namespace infersim::test
