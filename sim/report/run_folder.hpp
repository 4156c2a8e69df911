// The run folder (OUTPUT.md): created only once a run has its results, never
// over another run's files unless forced, each file written under a temporary
// name and renamed into place, so a failed write leaves no half file behind.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace infersim {

// Thrown when the folder or a file cannot be written; the message names it.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file being written: appends go to a large buffer and a temporary file;
// commit() flushes, checks every error and renames it to its final name.
// Destroyed without commit(), it removes the temporary file.
class OutputFile {
 public:
  explicit OutputFile(std::filesystem::path final_path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::string& buffer() { return buffer_; }
  // Writes the buffer out once it is large; call after each batch of appends.
  void maybe_flush() {
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void commit();

 private:
  static constexpr std::size_t kFlushBytes = 1 << 20;
  void flush();
  std::filesystem::path final_path_;
  std::filesystem::path temp_path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  bool committed_ = false;
};

// Writes a whole small file atomically.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

class RunFolder {
 public:
  // `requested` empty: output/<YYYYmmdd-HHMMSS>-<mode>, or
  // output/<YYYYmmdd-HHMMSS>-<mode>-<name> when a name is given (UTC), with -2,
  // -3, ... appended when a folder of that name exists (a second run in the
  // same second). Otherwise that folder: refused if it holds files and not
  // `force`.
  static RunFolder prepare(const std::string& requested, const std::string& mode, bool force,
                           const std::string& name = "");

  const std::filesystem::path& path() const { return path_; }
  // Creates the folder (and parents). Over a folder kept with `force`, first
  // removes what an earlier run left under infersim's own file names
  // (requests.csv, summary.json, plots/, recorded/, ...), so no file of that
  // run is taken for one of this run; other files are left alone.
  void create() const;
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  RunFolder(std::filesystem::path path, bool replace) : path_(std::move(path)), replace_(replace) {}
  std::filesystem::path path_;
  bool replace_ = false;  // an earlier run's files are there, and --force was given
};

}  // namespace infersim
