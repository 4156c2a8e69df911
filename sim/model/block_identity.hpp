// The identities of a request's KV blocks (BATCHING.md section 3), computed on
// the fly from its prompt's block ids: block j (tokens [jB, (j+1)B)) is
// (h[jB div Bh], (jB mod Bh) div B) = (h[j div m], j mod m) with m = Bh / B,
// when (j+1)B <= min(p, n_h * Bh); every later block has none.
#pragma once

#include <cstdint>
#include <span>

namespace infersim {

class PromptBlocks {
 public:
  PromptBlocks() = default;
  // `block_tokens` (B) divides `id_tokens` (Bh) when there are ids (checked
  // with the knobs); no ids or Bh = 0: no block has an identity.
  PromptBlocks(std::span<const std::uint32_t> ids, std::uint32_t id_tokens, std::int64_t prompt,
               std::int64_t block_tokens) {
    if (ids.empty() || id_tokens == 0) return;
    ids_ = ids.data();
    per_id_ = static_cast<std::uint32_t>(id_tokens / block_tokens);
    // min(p, n_h * Bh), without a product that could overflow.
    const auto n_h = static_cast<std::int64_t>(ids.size());
    const std::int64_t covered =
        n_h >= (prompt + id_tokens - 1) / id_tokens ? prompt : n_h * id_tokens;
    count_ = static_cast<std::uint32_t>(covered / block_tokens);
  }

  // Blocks 0..count()-1 have an identity.
  std::uint32_t count() const { return count_; }
  // Blocks an id covers: Bh / B (1 without ids).
  std::uint32_t per_id() const { return per_id_; }
  // (h, sub) in one word; sub < m < 2^32 - 1, so never all ones.
  std::uint64_t identity(std::uint32_t j) const {
    return (std::uint64_t{ids_[j / per_id_]} << 32) | (j % per_id_);
  }

  // Identities of blocks j, j + 1, ... in turn, without a division each.
  class Cursor {
   public:
    std::uint64_t operator*() const { return (std::uint64_t{*id_} << 32) | sub_; }
    void next() { skip(1); }
    // The blocks from here to the end of this id, this one included.
    std::uint32_t left_in_id() const { return per_id_ - sub_; }
    // `n` next()s, n <= left_in_id().
    void skip(std::uint32_t n) {
      sub_ += n;
      if (sub_ == per_id_) {
        sub_ = 0;
        ++id_;
      }
    }

   private:
    friend class PromptBlocks;
    Cursor(const std::uint32_t* id, std::uint32_t sub, std::uint32_t per_id)
        : id_(id), sub_(sub), per_id_(per_id) {}
    const std::uint32_t* id_;
    std::uint32_t sub_;
    std::uint32_t per_id_;
  };
  // At block j < count().
  Cursor cursor(std::uint32_t j) const { return Cursor(ids_ + j / per_id_, j % per_id_, per_id_); }

 private:
  const std::uint32_t* ids_ = nullptr;
  std::uint32_t per_id_ = 1;
  std::uint32_t count_ = 0;
};

}  // namespace infersim
