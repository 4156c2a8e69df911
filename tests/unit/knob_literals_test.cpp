// A knob is named in its row and in the code that reads its value, nowhere
// else: every key of the batching section, as a string literal in the
// program's sources (comments aside), appears only in the files below, each
// for the reason given. A new list of keys written out by hand elsewhere
// fails here; it belongs in the rows (model/batching_knobs.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "model/batching_knobs.hpp"
#include "test_support.hpp"

namespace infersim {
namespace {

namespace fs = std::filesystem;

// The files, by name, that may name a batching knob, and why.
const std::map<std::string, std::string>& allowed_files() {
  static const std::map<std::string, std::string> kFiles = {
      {"batching_knobs.cpp", "the rows"},
      {"step_cost.hpp", "the step terms' keys, by which a fit reads and writes its coefficients"},
      {"measured_run_reader.cpp", "a measured run's meta.json, in vLLM's names"},
      {"measured_replay.cpp", "the engine's knobs from a measured run's meta.json"},
      {"hardware_model.cpp", "a preset's batching section, written by these names"},
      {"hardware_runs.cpp", "the presets' factors fitted to measured runs, by these names"},
      {"settings.cpp", "the fleet's console lines (lockstep among the fleet-wide knobs)"},
  };
  return kFiles;
}

// The source without its comments (// to the end of a line).
std::string without_comments(const std::string& text) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n')
        ++i;
      out += '\n';
      continue;
    }
    if (c == '"' && (i == 0 || text[i - 1] != '\\')) in_string = !in_string;
    if (c == '\n') in_string = false;
    out += c;
  }
  return out;
}

// Words too common to tell a knob from another use (a summary's "replicas",
// a router's name); their rows are checked through the others.
const std::set<std::string> kCommonWords = {"replicas", "router", "max_model_len"};

TEST(KnobLiterals, ABatchingKeyIsNamedOnlyInItsRowAndWhereItsValueIsRead) {
  std::map<fs::path, std::string> sources;
  for (const auto& entry : fs::recursive_directory_iterator(test::source_dir() / "sim")) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".cpp" || ext == ".hpp")
      sources[entry.path()] = without_comments(test::read_file(entry.path()));
  }
  ASSERT_GT(sources.size(), 50u);
  std::size_t keys = 0;
  for (const Knob<BatchingKnobs>& row : batching_knob_rows()) {
    if (kCommonWords.count(row.key)) continue;
    ++keys;
    for (const auto& [path, text] : sources) {
      const bool named = text.find("\"" + row.key + "\"") != std::string::npos ||
                         text.find("\"batching." + row.key + "\"") != std::string::npos;
      if (!named) continue;
      EXPECT_TRUE(allowed_files().count(path.filename().string()))
          << row.key << " is named in " << path
          << ": make what it needs from the rows (model/batching_knobs.cpp)";
    }
  }
  EXPECT_GE(keys, 25u);
}

TEST(KnobLiterals, TheCheckFindsAKeyNamedOutsideTheRows) {
  // The scan itself: a literal in code counts, one in a comment does not.
  EXPECT_NE(without_comments("f(\"kv_blocks\");").find("\"kv_blocks\""), std::string::npos);
  EXPECT_EQ(without_comments("// \"kv_blocks\"\nf();").find("kv_blocks"), std::string::npos);
  EXPECT_NE(without_comments("g(\"a // b\", \"kv_blocks\");").find("\"kv_blocks\""),
            std::string::npos);
}

}  // namespace
}  // namespace infersim
