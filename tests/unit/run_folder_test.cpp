// Nothing is lost: another run's folder is never written over unless forced,
// and a write that fails (disk full, a folder that cannot exist) says so and
// leaves no half-written file under a final name.
#include "report/run_folder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "test_support.hpp"

namespace infersim {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kTrace =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:15:46,374,44\n2023-11-16 18:15:50,10,2\n";

// Every entry under `dir`, as paths relative to it, sorted.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    names.push_back(fs::relative(entry.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

// The temporary name OutputFile writes `final_path` under in this process.
fs::path temp_name_of(const fs::path& final_path) {
  fs::path temp = final_path;
  temp += ".tmp-" + std::to_string(::getpid());
  return temp;
}

TEST(RunFolder, AnotherRunsFolderIsRefusedAndLeftUntouched) {
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::write_file(dir / "t.csv", kTrace).string();
  const fs::path output = dir / "earlier-run";
  fs::create_directories(output);
  test::write_file(output / "summary.json", "{\"requests\": 7}\n");
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(output / "summary.json", old_time);
  fs::last_write_time(output, old_time);

  const auto r =
      test::run_cli({"run", "--recorded", "--trace", trace, "--output", output.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, StartsWith("infersim: " + output.string() + ": already holds files"));
  EXPECT_THAT(r.err, HasSubstr("--force"));
  EXPECT_TRUE(r.out.empty()) << "refused before anything ran";
  EXPECT_EQ(listing(output), std::vector<std::string>{"summary.json"});
  EXPECT_EQ(test::read_file(output / "summary.json"), "{\"requests\": 7}\n");
  EXPECT_EQ(fs::last_write_time(output / "summary.json"), old_time);
  EXPECT_EQ(fs::last_write_time(output), old_time);
}

TEST(RunFolder, ForceWritesOverAnotherRun) {
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::write_file(dir / "t.csv", kTrace).string();
  const fs::path output = dir / "earlier-run";
  fs::create_directories(output);
  test::write_file(output / "summary.json", "{\"requests\": 7}\n");
  const auto r = test::run_cli({"run", "--recorded", "--trace", trace, "--output", output.string(),
                                "--force", "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(test::read_file(output / "summary.json"), HasSubstr("\"requests\": 2"));
}

// A compare run with requests.csv, plots and a note of the user's, then a
// recorded run without requests.csv over it: nothing of the first run is left
// to be taken for the second's, and the note stays.
TEST(RunFolder, ForceLeavesNoFileOfTheEarlierRunButOthersAlone) {
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::write_file(dir / "t.csv", kTrace).string();
  const fs::path output = dir / "run";
  auto first = test::run_cli({"run", "--trace", trace, "--output", output.string(), "--per-request",
                              "csv", "--plots", "none"});
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_TRUE(fs::exists(output / "recorded" / "requests.csv"));
  fs::create_directories(output / "plots");
  test::write_file(output / "plots" / "wait.svg", "<svg/>");
  test::write_file(output / "notes.txt", "mine\n");
  const auto second =
      test::run_cli({"run", "--recorded", "--trace", trace, "--output", output.string(), "--force",
                     "--plots", "none", "--per-request", "none"});
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(listing(output),
            (std::vector<std::string>{"cdf.csv", "notes.txt", "report.html", "settings.json",
                                      "summary.csv", "summary.json", "timeseries.csv"}));
  EXPECT_EQ(test::read_file(output / "notes.txt"), "mine\n");
}

TEST(RunFolder, DefaultNameIsTheTimeTheModeAndTheNameGiven) {
  const fs::path dir = test::fresh_dir();
  const test::InFolder here(dir);
  const std::string plain = RunFolder::prepare("", "compare", false).path().string();
  EXPECT_THAT(plain, ::testing::MatchesRegex("output/[0-9]{8}-[0-9]{6}-compare"));
  // A second run in the same second gets -2, a third -3. The clock may turn
  // over a second between two calls: then the pair is taken again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    const fs::path first = RunFolder::prepare("", "recorded", false, "base").path();
    EXPECT_THAT(first.string(), ::testing::MatchesRegex("output/[0-9]{8}-[0-9]{6}-recorded-base"));
    RunFolder::prepare(first.string(), "recorded", false).create();
    test::write_file(first / "summary.json", "{}");
    const fs::path second = RunFolder::prepare("", "recorded", false, "base").path();
    if (second.string().substr(0, first.string().size()) != first.string()) continue;
    EXPECT_EQ(second.string(), first.string() + "-2");
    fs::create_directories(second);
    const fs::path third = RunFolder::prepare("", "recorded", false, "base").path();
    if (third.string().substr(0, first.string().size()) != first.string()) continue;
    EXPECT_EQ(third.string(), first.string() + "-3");
    return;
  }
  ADD_FAILURE() << "the clock turned over a second between every pair of calls";
}

TEST(RunFolder, AnEmptyFolderIsNotAnotherRun) {
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::write_file(dir / "t.csv", kTrace).string();
  fs::create_directories(dir / "empty");
  const auto r = test::run_cli({"run", "--recorded", "--trace", trace, "--output",
                                (dir / "empty").string(), "--plots", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "empty" / "summary.json"));
}

TEST(RunFolder, AFolderThatCannotExistIsReportedWithNoPartialFiles) {
  // A path under a regular file fails for root too, unlike a chmod.
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::write_file(dir / "t.csv", kTrace).string();
  test::write_file(dir / "file.txt", "keep\n");
  const fs::path output = dir / "file.txt" / "sub";
  const auto r = test::run_cli(
      {"run", "--recorded", "--trace", trace, "--output", output.string(), "--plots", "none"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, StartsWith("infersim: " + output.string() + ": "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(test::read_file(dir / "file.txt"), "keep\n");
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"file.txt", "t.csv"}));
}

TEST(RunFolder, AFileThatCannotBeRenamedIntoPlaceLeavesNoTemporaryFile) {
  // A folder where settings.json should go: the rename fails after the write.
  const fs::path dir = test::fresh_dir();
  const std::string trace = test::write_file(dir / "t.csv", kTrace).string();
  const fs::path output = dir / "run";
  fs::create_directories(output / "settings.json" / "occupied");
  const auto r = test::run_cli({"run", "--recorded", "--trace", trace, "--output", output.string(),
                                "--force", "--plots", "none"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, StartsWith("infersim: " + (output / "settings.json").string() + ": "));
  for (const std::string& name : listing(output)) {
    EXPECT_THAT(name, ::testing::Not(HasSubstr(".tmp-"))) << "left behind";
  }
}

TEST(OutputFile, AFullDiskIsReportedAndNothingHalfWrittenIsLeft) {
  // The temporary name is this process's, so pointing it at /dev/full makes
  // every write fail with ENOSPC, as a full disk does.
  const fs::path dir = test::fresh_dir();
  const fs::path final_path = dir / "requests.csv";
  fs::create_symlink("/dev/full", temp_name_of(final_path));
  const std::string message = test::error_of<OutputError>(
      [&] { write_file_atomically(final_path, std::string(100, 'x')); });
  EXPECT_THAT(message, StartsWith(final_path.string() + ": cannot write: "));
  EXPECT_THAT(message, HasSubstr(std::strerror(ENOSPC)));
  EXPECT_FALSE(fs::exists(final_path));
  EXPECT_TRUE(listing(dir).empty());
}

TEST(OutputFile, AFullDiskMidwayThroughALargeFileIsReported) {
  const fs::path dir = test::fresh_dir();
  const fs::path final_path = dir / "requests.csv";
  fs::create_symlink("/dev/full", temp_name_of(final_path));
  EXPECT_THAT(test::error_of<OutputError>([&] {
                OutputFile file(final_path);
                for (int i = 0; i < 40000; ++i) {
                  file.buffer().append("1,0,0.000000000,374,44,0.000000000,0.000000000\n");
                  file.maybe_flush();  // past 1 MiB: written out, and the write fails here
                }
                file.commit();
              }),
              HasSubstr(std::strerror(ENOSPC)));
  EXPECT_FALSE(fs::exists(final_path));
  EXPECT_TRUE(listing(dir).empty());
}

// A real full file system, where mounting one is allowed (root, outside most
// containers' limits).
TEST(OutputFile, ATinyFileSystemFillsUpCleanly) {
  const fs::path dir = test::fresh_dir();
  const fs::path mount_point = dir / "tiny";
  fs::create_directories(mount_point);
  if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0) {
    INFERSIM_SKIP_OR_FAIL("cannot mount a tmpfs here: " << std::strerror(errno));
  }
  test::write_file(mount_point / "earlier.csv", "kept\n");
  const std::string message = test::error_of<OutputError>(
      [&] { write_file_atomically(mount_point / "requests.csv", std::string(1 << 20, 'x')); });
  EXPECT_THAT(message, StartsWith((mount_point / "requests.csv").string() + ": cannot write"));
  EXPECT_THAT(message, HasSubstr(std::strerror(ENOSPC)));
  const std::vector<std::string> left = listing(mount_point);
  const std::string kept = test::read_file(mount_point / "earlier.csv");
  ::umount(mount_point.c_str());
  EXPECT_EQ(left, std::vector<std::string>{"earlier.csv"});
  EXPECT_EQ(kept, "kept\n");
}

}  // namespace
}  // namespace infersim
