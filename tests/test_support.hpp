// Helpers shared by the tests: temporary files and folders, reading a file
// and its lines, CSV rows and nine-decimal seconds, catching an error's
// message, running the command line in-process, where the traces are, whether
// gnuplot is installed, and skipping (or, under CI, failing) a test that
// cannot run.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "core/input_error.hpp"
#include "report/plots.hpp"
#include "scenario/scenario.hpp"

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

// The recorded mode of `settings` on `trace` alone, on one thread, as
// `infersim run --recorded` replays it.
inline ModeResult run_recorded(Settings settings, const Trace& trace, bool keep_requests) {
  settings.mode = "recorded";
  return *run_scenario(settings, trace, keep_requests, 1).recorded;
}

inline std::filesystem::path source_dir() {
  return INFERSIM_SOURCE_DIR;
}

// Whether this is CI's run (CI=true, as .ci/run sets it): there a test that
// cannot run for want of a tool or a permission fails instead of skipping.
inline bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// Whether gnuplot runs here (the tests of rendered plots need it).
inline bool gnuplot_installed() {
  const ProgramRun r = run_program({"gnuplot", "--version"}, "");
  return r.started && r.status == 0;
}

// A published trace under trace/, fetched by trace/fetch; a clear failure
// when missing.
inline std::string published_trace(const std::string& name) {
  const auto path = source_dir() / "trace" / name;
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << path << " is missing: run trace/fetch (see trace/README.md)";
  }
  return path.string();
}

// A file of the measured vLLM runs under trace/measured/ (a run's folder, or
// workloads/NAME), fetched by trace/measured/fetch; a clear failure when
// missing.
inline std::string measured_path(const std::string& name) {
  const auto path = source_dir() / "trace" / "measured" / name;
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << path
                  << " is missing: run trace/measured/fetch (see examples/validate_vllm/README.md)";
  }
  return path.string();
}

// The seed's trace.
inline std::string seed_trace() {
  return published_trace("azure_llm_code_1h.csv");
}

// Eight requests in two bursts: 1 core queues them, 4 do not.
inline constexpr const char* kTwoBurstsTrace =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2024-01-01 00:00:00.000,1000,10\n"
    "2024-01-01 00:00:00.000,2000,20\n"
    "2024-01-01 00:00:00.100,500,5\n"
    "2024-01-01 00:00:00.200,3000,30\n"
    "2024-01-01 00:00:30.000,1000,40\n"
    "2024-01-01 00:00:30.000,1500,15\n"
    "2024-01-01 00:00:30.500,800,8\n"
    "2024-01-01 00:00:59.000,1200,12\n";

// Six long prompts within 40 ms, then two short ones: one batching replica
// runs the six together and with a TTFT budget of 0.3 s and 0.01 s a generated
// token misses most deadlines; three replicas meet them all.
inline constexpr const char* kBurstTrace =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2024-01-01 00:00:00.000,4000,50\n"
    "2024-01-01 00:00:00.000,6000,40\n"
    "2024-01-01 00:00:00.010,3000,60\n"
    "2024-01-01 00:00:00.020,5000,30\n"
    "2024-01-01 00:00:00.030,2000,80\n"
    "2024-01-01 00:00:00.040,7000,20\n"
    "2024-01-01 00:00:30.000,1000,40\n"
    "2024-01-01 00:00:30.000,1500,15\n";

// A fresh empty folder under the test temp dir, unique to the running test.
// Forty requests over twelve seconds in Azure's CSV, prompts of 200 to 1955
// tokens and 20 to 59 generated.
inline std::string forty_requests_trace() {
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int i = 0; i < 40; ++i) {
    char line[96];
    std::snprintf(line, sizeof(line), "2023-11-16 00:00:%02d.%03d,%d,%d\n", i * 300 / 1000,
                  i * 300 % 1000, 200 + 45 * i, 20 + i);
    csv += line;
  }
  return csv;
}

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

// A file of the running test's own, written exactly (no newline
// translation): `STEM-N.EXTENSION`, N counting the test's files, in a folder
// of the test's under the test temp dir, emptied when the test writes its
// first file there.
inline std::filesystem::path temp_file(const std::string& stem, const std::string& bytes,
                                       const std::string& extension) {
  static std::string folder_test;
  static std::filesystem::path folder;
  static int files = 0;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = std::string(info->test_suite_name()) + "." + info->name();
  if (test != folder_test) {
    folder = fresh_dir("files");
    folder_test = test;
    files = 0;
  }
  const auto path = folder / (stem + "-" + std::to_string(files++) + extension);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  EXPECT_TRUE(out.good()) << "could not write " << path;
  return path;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// The lines of a text, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// The comma-separated fields of a line (no quoting), a trailing comma ending
// in an empty field.
inline std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');)
    fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// Runs `action`, which must throw `Error` (InputError unless named), and
// returns the error's message; a failure when nothing is thrown.
template <typename Error = InputError, typename Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing was thrown";
  return {};
}

// A CSV file the program wrote (no quoted cells), one map a row from the
// header's names to the cells.
inline std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& path) {
  std::istringstream text(read_file(path));
  std::string line;
  std::getline(text, line);
  const std::vector<std::string> header = fields_of(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(text, line)) {
    const std::vector<std::string> cells = fields_of(line);
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

// A fixture: a fresh folder of the test's holding `trace.csv` (the CSV text
// the derived fixture gives), and commands run on that trace into folders
// beside it.
class TraceFolder : public ::testing::Test {
 protected:
  explicit TraceFolder(const char* trace_csv) : trace_csv_(trace_csv) {}
  void SetUp() override {
    dir_ = fresh_dir();
    trace_ = write_file(dir_ / "trace.csv", trace_csv_).string();
  }
  // `COMMAND... --trace TRACE --output DIR/FOLDER EXTRA...`, in-process.
  CliResult run_on_trace(std::vector<std::string> command, const std::string& folder,
                         const std::vector<std::string>& extra) {
    command.insert(command.end(), {"--trace", trace_, "--output", (dir_ / folder).string()});
    command.insert(command.end(), extra.begin(), extra.end());
    return run_cli(command);
  }
  std::filesystem::path dir_;
  std::string trace_;

 private:
  const char* trace_csv_;
};

// The one line a run refused for bad input prints (status 2, nothing on
// standard output), without the program's name.
inline std::string one_error_line(const CliResult& r) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const std::string prefix = "infersim: ";
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(r.err.empty());
  if (!r.err.empty()) {
    EXPECT_EQ(r.err.back(), '\n');
  }
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
  EXPECT_EQ(r.err.find('\0'), std::string::npos);
  if (r.err.size() <= prefix.size()) return {};
  return r.err.substr(prefix.size(), r.err.size() - prefix.size() - 1);
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
