// SHA-256 (FIPS 180-4) of a file, so that settings.json names exactly which
// trace a run read. OpenSSL's EVP interface computes it (with the processor's
// SHA extensions where it has them).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of the callers' includes

namespace infersim {

class Sha256 {
 public:
  // Throws std::runtime_error when OpenSSL cannot start a digest.
  Sha256();
  void update(const void* data, std::size_t size);
  // Lower-case hex digest; the object is spent afterwards.
  std::string hex_digest();

 private:
  struct FreeContext {
    void operator()(evp_md_ctx_st* context) const;
  };
  std::unique_ptr<evp_md_ctx_st, FreeContext> context_;
};

std::string sha256_hex(std::string_view data);
// Throws std::runtime_error when the file cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace infersim
