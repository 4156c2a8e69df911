#include "model/block_identity.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace infersim {
namespace {

std::uint64_t id(std::uint32_t h, std::uint32_t sub) {
  return (std::uint64_t{h} << 32) | sub;
}

// Bh = 512, B = 16: m = 32 blocks an id. p = 700 with two ids (1024 tokens):
// blocks with (j+1)*16 <= 700 have one, j < 43 (43*16 = 688, 44*16 = 704).
TEST(PromptBlocks, EachIdCoversBhOverBBlocks) {
  const std::vector<std::uint32_t> ids{7, 9};
  const PromptBlocks blocks(ids, 512, 700, 16);
  EXPECT_EQ(blocks.count(), 43u);
  EXPECT_EQ(blocks.identity(0), id(7, 0));
  EXPECT_EQ(blocks.identity(31), id(7, 31));
  EXPECT_EQ(blocks.identity(32), id(9, 0));
  EXPECT_EQ(blocks.identity(42), id(9, 10));
}

// The ids cover 1024 tokens of a 2000-token prompt: 64 blocks.
TEST(PromptBlocks, ThePromptBeyondItsIdsHasNone) {
  const std::vector<std::uint32_t> ids{7, 9};
  EXPECT_EQ(PromptBlocks(ids, 512, 2000, 16).count(), 64u);
  EXPECT_EQ(PromptBlocks(ids, 512, 1024, 16).count(), 64u);
  EXPECT_EQ(PromptBlocks(ids, 512, 15, 16).count(), 0u);
}

TEST(PromptBlocks, OneIdABlockWhenBhIsB) {
  const std::vector<std::uint32_t> ids{5, 6, 7};
  const PromptBlocks blocks(ids, 16, 48, 16);
  EXPECT_EQ(blocks.count(), 3u);
  EXPECT_EQ(blocks.identity(2), id(7, 0));
}

TEST(PromptBlocks, NoIdsNoIdentities) {
  EXPECT_EQ(PromptBlocks({}, 512, 4096, 16).count(), 0u);
  EXPECT_EQ(PromptBlocks().count(), 0u);
}

}  // namespace
}  // namespace infersim
