#include "core/sha256.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "test_support.hpp"

namespace infersim {
namespace {

TEST(Sha256, MatchesTheStandardTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalUpdatesEqualOneShot) {
  const std::string text(1000, 'x');
  Sha256 hash;
  for (std::size_t i = 0; i < text.size(); i += 37)
    hash.update(text.data() + i, std::min<std::size_t>(37, text.size() - i));
  EXPECT_EQ(hash.hex_digest(), sha256_hex(text));
}

// FIPS 180-4's long message, a million 'a', read from a file as traces are.
TEST(Sha256, HashesAFileAsItsBytes) {
  const auto path = test::fresh_dir() / "million_a.txt";
  test::write_file(path, std::string(1'000'000, 'a'));
  EXPECT_EQ(sha256_file_hex(path.string()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_THROW(sha256_file_hex((path.parent_path() / "missing").string()), std::runtime_error);
}

}  // namespace
}  // namespace infersim
