// SHA-256 (FIPS 180-4) of a file, so that settings.json names exactly which
// trace a run read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace infersim {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  // Lower-case hex digest; the object is spent afterwards.
  std::string hex_digest();

 private:
  // Compresses `blocks` 64-byte blocks, with the x86 SHA extensions when the
  // processor has them.
  void compress(const unsigned char* data, std::size_t blocks);
  std::uint32_t state_[8];
  unsigned char buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);
// Throws std::runtime_error when the file cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace infersim
