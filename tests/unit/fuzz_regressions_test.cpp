// Replays, in every build, each input the fuzzers once crashed on (kept under
// tests/fuzz/regressions/<target>/) and the seed corpus, through the same entry
// the fuzz targets use: only InputError may come out, and a trace that is read
// must hold its records in time order (fuzz_entry.hpp aborts otherwise).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/fuzz_entry.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;

std::vector<fs::path> inputs_of(fuzz::Target target, const std::string& kind) {
  std::vector<fs::path> files;
  const fs::path dir = test::source_dir() / "tests" / "fuzz" / kind / fuzz::name_of(target);
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().filename().string().front() != '.') {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzRegressions : public ::testing::TestWithParam<fuzz::Target> {};

TEST_P(FuzzRegressions, KeptInputsAndSeedsGiveAnswersNotCrashes) {
  // The entry writes each input to a file: in this test's folder, not in the
  // machine's temporary folder.
  const fs::path dir = test::fresh_dir();
  // The name the entry would use in the machine's temporary folder; a file
  // left there by an earlier process with the same id is not this run's.
  auto machine_temp = [](const char* extension) {
    return fs::temp_directory_path() / ("infersim-fuzz-" + std::to_string(::getpid()) + extension);
  };
  const std::vector<const char*> extensions = {".csv", ".jsonl", ".json"};
  std::vector<bool> there_before;
  for (const char* extension : extensions)
    there_before.push_back(fs::exists(machine_temp(extension)));
  fuzz::input_dir() = dir;
  const std::vector<fs::path> seeds = inputs_of(GetParam(), "corpus");
  EXPECT_FALSE(seeds.empty()) << "no seed corpus for " << fuzz::name_of(GetParam());
  std::vector<fs::path> files = inputs_of(GetParam(), "regressions");
  files.insert(files.end(), seeds.begin(), seeds.end());
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const std::string bytes = test::read_file(file);
    try {
      fuzz::run_one(GetParam(), reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError: " << e.what();
    }
  }
  fuzz::input_dir().clear();
  EXPECT_FALSE(fs::is_empty(dir)) << "the inputs were written somewhere else";
  for (std::size_t i = 0; i < extensions.size(); ++i) {
    if (!there_before[i]) {
      EXPECT_FALSE(fs::exists(machine_temp(extensions[i])));
    }
  }
}

// A seed is a valid input: it must read without an error, or it seeds nothing.
TEST(FuzzRegressions, AzureAndMooncakeSeedsAreValidTraces) {
  for (const fs::path& file : inputs_of(fuzz::Target::kAzureCsv, "corpus")) {
    TraceSource source;
    source.path = file.string();
    EXPECT_NO_THROW(read_trace(source)) << file;
  }
  for (const fs::path& file : inputs_of(fuzz::Target::kMooncakeJsonl, "corpus")) {
    TraceSource source;
    source.path = file.string();
    EXPECT_NO_THROW(read_trace(source)) << file;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegressions,
                         ::testing::Values(fuzz::Target::kAzureCsv, fuzz::Target::kMooncakeJsonl,
                                           fuzz::Target::kGenericColumns, fuzz::Target::kSettings),
                         [](const auto& info) {
                           std::string name = fuzz::name_of(info.param);
                           name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
                           return name;
                         });

}  // namespace
}  // namespace infersim
