// Times the trace readers and the file digest on given files: each command
// REPEAT times, printing every run's seconds and their median, so that a
// reader's speed can be compared before and after a change on the same files.
//
//   read_bench read FILE [FORMAT [REPEAT]]   read_trace (FORMAT: auto, csv, ...)
//   read_bench azure FILE [REPEAT]            read_azure_csv alone
//   read_bench sha256 FILE [REPEAT]           sha256_file_hex
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/sha256.hpp"
#include "trace/azure_csv_reader.hpp"
#include "trace/trace_reader.hpp"

namespace {

double seconds_of(const std::function<std::size_t()>& work, std::size_t& result) {
  const auto start = std::chrono::steady_clock::now();
  result = work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int time_runs(const std::function<std::size_t()>& work, int repeat) {
  std::vector<double> runs;
  std::size_t result = 0;
  for (int i = 0; i < repeat; ++i)
    runs.push_back(seconds_of(work, result));
  std::printf("result %zu; runs:", result);
  for (const double s : runs)
    std::printf(" %.4f", s);
  std::sort(runs.begin(), runs.end());
  std::printf("; median %.4f s\n", runs[runs.size() / 2]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: read_bench read|azure|sha256 FILE [FORMAT] [REPEAT]\n");
    return 2;
  }
  const std::string command = argv[1];
  const std::string path = argv[2];
  if (command == "read") {
    infersim::TraceSource source;
    source.path = path;
    source.format = argc > 3 ? argv[3] : "auto";
    const int repeat = argc > 4 ? std::atoi(argv[4]) : 9;
    if (source.format == "csv") {
      source.columns = {"TIMESTAMP", "ContextTokens", "GeneratedTokens", ""};
      source.unit = infersim::TimestampUnit::kDatetime;
    }
    return time_runs([&] { return infersim::read_trace(source).records.size(); }, repeat);
  }
  const int repeat = argc > 3 ? std::atoi(argv[3]) : 9;
  if (command == "azure") {
    return time_runs([&] { return infersim::read_azure_csv(path).records.size(); }, repeat);
  }
  if (command == "sha256") {
    return time_runs([&] { return infersim::sha256_file_hex(path).size(); }, repeat);
  }
  std::fprintf(stderr, "read_bench: unknown command '%s'\n", command.c_str());
  return 2;
}
