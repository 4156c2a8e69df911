#include "core/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/input_error.hpp"

namespace infersim {

MappedFile::MappedFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    void* p =
        ::mmap(nullptr, static_cast<std::size_t>(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      ::madvise(p, static_cast<std::size_t>(info.st_size), MADV_SEQUENTIAL);
      data_ = static_cast<const char*>(p);
      size_ = static_cast<std::size_t>(info.st_size);
      mapped_ = true;
      ::close(fd);
      return;
    }
  }
  // Not a regular file, empty, or not mappable: read it.
  char block[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, block, sizeof block);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      throw std::runtime_error(path + ": " + std::strerror(error));
    }
    if (got == 0) break;
    read_.append(block, static_cast<std::size_t>(got));
  }
  ::close(fd);
  data_ = read_.data();
  size_ = read_.size();
}

void MappedFile::done_with(std::size_t from, std::size_t to) const {
  if (!mapped_) return;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t begin = (from + page - 1) / page * page;
  const std::size_t end = std::min(to, size_) / page * page;
  if (begin < end) ::madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

std::unique_ptr<MappedFile> map_input_file(const std::string& path) {
  try {
    return std::make_unique<MappedFile>(path);
  } catch (const std::runtime_error&) {
    throw InputError(path, 0, "", "cannot open the file");
  }
}

}  // namespace infersim
