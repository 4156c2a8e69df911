// A file's bytes, mapped read-only into memory (read into memory where it
// cannot be mapped, e.g. a pipe): readers parse traces in place, without
// copying them through a buffer.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace infersim {

class MappedFile {
 public:
  // Throws std::runtime_error when the file cannot be opened or read.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }
  // The bytes [from, to) will not be read again: the whole pages among them
  // leave the process's resident memory (the page cache keeps them; reading
  // them again would only map them anew). A no-op for a file that was read.
  void done_with(std::size_t from, std::size_t to) const;

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  std::string read_;  // the bytes when the file could not be mapped
};

// An input file of the user's mapped; an InputError "PATH: cannot open the
// file" where it cannot be opened or read.
std::unique_ptr<MappedFile> map_input_file(const std::string& path);

}  // namespace infersim
