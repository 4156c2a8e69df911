#include "report/run_folder.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace infersim {
namespace fs = std::filesystem;

OutputFile::OutputFile(fs::path final_path) : final_path_(std::move(final_path)) {
  temp_path_ = final_path_;
  temp_path_ += ".tmp-" + std::to_string(::getpid());
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw OutputError(final_path_.string() + ": cannot write: " + std::strerror(errno));
  }
  buffer_.reserve(kFlushBytes + (64 << 10));
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) {
    std::error_code ignored;
    fs::remove(temp_path_, ignored);
  }
}

void OutputFile::flush() {
  if (buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    throw OutputError(final_path_.string() + ": cannot write: " + std::strerror(errno));
  }
  buffer_.clear();
}

void OutputFile::commit() {
  flush();
  const int flushed = std::fflush(file_);
  const int saved_errno = errno;
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (flushed != 0 || closed != 0) {
    throw OutputError(final_path_.string() +
                      ": cannot write: " + std::strerror(flushed != 0 ? saved_errno : errno));
  }
  std::error_code error;
  fs::rename(temp_path_, final_path_, error);
  if (error)
    throw OutputError(final_path_.string() + ": cannot rename into place: " + error.message());
  committed_ = true;
}

void write_file_atomically(const fs::path& path, std::string_view content) {
  OutputFile file(path);
  file.buffer().append(content);
  file.commit();
}

RunFolder RunFolder::prepare(const std::string& requested, const std::string& mode, bool force,
                             const std::string& name) {
  if (requested.empty()) {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
    const fs::path base =
        fs::path("output") / (std::string(stamp) + "-" + mode + (name.empty() ? "" : "-" + name));
    fs::path candidate = base;
    for (int i = 2; fs::exists(candidate); ++i)
      candidate = base.string() + "-" + std::to_string(i);
    return RunFolder(candidate, false);
  }
  const fs::path path(requested);
  std::error_code error;
  if (fs::exists(path, error)) {
    if (!fs::is_directory(path, error)) {
      throw OutputError(requested + ": exists and is not a folder");
    }
    if (!fs::is_empty(path, error)) {
      if (!force) {
        throw OutputError(requested +
                          ": already holds files; pass --force to overwrite them, or choose "
                          "another --output");
      }
      return RunFolder(path, true);
    }
  }
  return RunFolder(path, false);
}

namespace {

// Every name a run, a sweep or a capacity search writes in its folder (and in
// a mode's subfolder); plots/ holds only .gp and .svg files.
constexpr const char* kOwnFiles[] = {
    "requests.csv", "summary.json",  "summary.csv",  "settings.json",    "timeseries.csv",
    "cdf.csv",      "report.html",   "measured.csv", "replications.csv", "sweep.csv",
    "shard.json",   "capacity.json", "capacity.csv"};
// What run --measured writes beside them.
constexpr const char* kMeasuredRunFiles[] = {"measured_timeseries.csv", "measured_cdf.csv",
                                             "measured_table.txt"};

void remove_own_files(const fs::path& dir) {
  std::error_code error;
  for (const char* name : kOwnFiles) {
    fs::remove(dir / name, error);
    if (error) throw OutputError((dir / name).string() + ": cannot remove: " + error.message());
  }
  for (const char* name : kMeasuredRunFiles) {
    fs::remove(dir / name, error);
    if (error) throw OutputError((dir / name).string() + ": cannot remove: " + error.message());
  }
  const fs::path plots = dir / "plots";
  if (fs::is_directory(plots, error)) {
    for (const auto& entry : fs::directory_iterator(plots, error)) {
      const fs::path& p = entry.path();
      if (p.extension() == ".gp" || p.extension() == ".svg") fs::remove(p, error);
    }
    fs::remove(plots, error);  // only when empty; an error here leaves it
  }
}

}  // namespace

void RunFolder::create() const {
  std::error_code error;
  if (replace_) {
    remove_own_files(path_);
    for (const char* mode : {"recorded", "synthetic", "retimed", "closed-loop"}) {
      if (fs::is_directory(path_ / mode, error)) {
        remove_own_files(path_ / mode);
        fs::remove(path_ / mode, error);  // only when empty
      }
    }
    error.clear();
  }
  fs::create_directories(path_, error);
  if (error)
    throw OutputError(path_.string() + ": cannot create the run folder: " + error.message());
}

}  // namespace infersim
