// The documents a newcomer reads: a README short enough to read to the end,
// every link in it and in the guides pointing at a file of the tree, and the
// specification the code cites present in the tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;

// The relative targets of a Markdown file's links and images, without
// their #fragment; web addresses and in-page anchors left out.
std::vector<std::string> relative_links(const std::string& markdown) {
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(markdown.begin(), markdown.end(), link);
       it != std::sregex_iterator(); ++it) {
    std::string target = (*it)[1].str();
    if (target.starts_with("http://") || target.starts_with("https://") ||
        target.starts_with("#") || target.starts_with("mailto:"))
      continue;
    target = target.substr(0, target.find('#'));
    out.push_back(target);
  }
  return out;
}

TEST(Docs, TheReadmeIsAtMostFourHundredLines) {
  const std::string readme = test::read_file(test::source_dir() / "README.md");
  EXPECT_LE(std::count(readme.begin(), readme.end(), '\n'), 400);
}

TEST(Docs, TheSpecificationTheCodeCitesIsInTheTree) {
  for (const char* file : {"README.md", "MODEL.md", "BATCHING.md", "OUTPUT.md"}) {
    const fs::path path = test::source_dir() / "sim" / "spec" / file;
    ASSERT_TRUE(fs::exists(path)) << path;
    EXPECT_GT(test::read_file(path).size(), 1000u) << path;
  }
}

TEST(Docs, EveryRelativeLinkOfTheReadmeAndTheGuidesLeadsToAFile) {
  std::vector<fs::path> documents = {test::source_dir() / "README.md"};
  for (const char* dir :
       {"sim", "sim/spec", "settings", "settings/presets", "trace", "output", "tests"}) {
    documents.push_back(test::source_dir() / dir / "README.md");
  }
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "examples")) {
    if (fs::exists(entry.path() / "README.md")) documents.push_back(entry.path() / "README.md");
  }
  std::size_t links = 0;
  for (const fs::path& document : documents) {
    if (!fs::exists(document)) continue;
    for (const std::string& target : relative_links(test::read_file(document))) {
      ++links;
      EXPECT_TRUE(fs::exists(document.parent_path() / target))
          << document << " links to " << target << ", which is not in the tree";
    }
  }
  EXPECT_GT(links, 10u);  // the README alone has more: the scan itself works
}

TEST(Docs, LinksAreFoundInMarkdown) {
  EXPECT_THAT(relative_links("see [a](b/c.md#x), ![p](d.svg) and [w](https://e.org)"),
              ::testing::ElementsAre("b/c.md", "d.svg"));
}

}  // namespace
}  // namespace infersim
