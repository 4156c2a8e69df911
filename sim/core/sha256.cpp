#include "core/sha256.hpp"

#include <algorithm>
#include <stdexcept>

#include <openssl/evp.h>

#include "core/mapped_file.hpp"

namespace infersim {

void Sha256::FreeContext::operator()(evp_md_ctx_st* context) const {
  EVP_MD_CTX_free(context);
}

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL cannot start a SHA-256 digest");
  }
}

void Sha256::update(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(context_.get(), data, size) != 1) {
    throw std::runtime_error("OpenSSL's SHA-256 update failed");
  }
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context_.get(), digest, &size) != 1) {
    throw std::runtime_error("OpenSSL's SHA-256 digest failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 hash;
  hash.update(data.data(), data.size());
  return hash.hex_digest();
}

std::string sha256_file_hex(const std::string& path) {
  // Mapped, not read: no copy through a buffer (MappedFile reads what it
  // cannot map, and throws std::runtime_error on what it cannot open).
  // Hashed a block at a time, each let go of once hashed, so that the file
  // is never resident in the process twice while a reader maps it too.
  const MappedFile file(path);
  const std::string_view bytes = file.bytes();
  constexpr std::size_t kBlock = std::size_t{16} << 20;
  Sha256 hash;
  for (std::size_t at = 0; at < bytes.size(); at += kBlock) {
    const std::size_t n = std::min(kBlock, bytes.size() - at);
    hash.update(bytes.data() + at, n);
    file.done_with(at, at + n);
  }
  return hash.hex_digest();
}

}  // namespace infersim
