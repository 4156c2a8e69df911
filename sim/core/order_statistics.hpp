// Exact order statistics of large arrays without sorting them: the values at
// chosen ranks, found by bucketing the keys on their high bits, counting the
// buckets, and sorting only the buckets that hold a wanted rank (the same way
// again inside a bucket that is still large). A few sequential reads of the
// data instead of a sort's passes of reads and writes; the values found are
// exactly those a full sort would put at the ranks.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace infersim {

// Unsigned keys in the order of the values they stand for.
constexpr std::uint64_t order_key(std::int64_t v) {
  return static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63);
}
constexpr std::int64_t int64_of_order_key(std::uint64_t k) {
  return static_cast<std::int64_t>(k ^ (std::uint64_t{1} << 63));
}
// Doubles by their bits: negatives reversed below the positives; -0 sorts just
// below +0 (NaN is not a value here).
inline std::uint64_t order_key(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
}
inline double double_of_order_key(std::uint64_t k) {
  const std::uint64_t bits = (k >> 63) != 0 ? k & ~(std::uint64_t{1} << 63) : ~k;
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

namespace order_statistics_detail {

// A wanted rank and where its value goes.
struct Wanted {
  std::size_t rank;
  std::size_t slot;
};

// Keys held in an array (a gathered bucket).
struct ArrayKeys {
  const std::uint64_t* keys;
  std::uint64_t operator()(std::size_t i) const { return keys[i]; }
};

// Below this many keys a bucket is copied and sorted.
inline constexpr std::size_t kSortBelow = 2048;
// Up to 2^16 buckets, and about 8 keys a bucket where there are fewer keys:
// the counts are as large as the keys they count otherwise.
inline constexpr unsigned kMostBucketBits = 16;
constexpr unsigned bucket_bits(std::size_t n) {
  const auto bits = static_cast<unsigned>(std::bit_width(n));
  return bits > kMostBucketBits + 3 ? kMostBucketBits : bits - 3;
}

// `wanted` sorted by rank, every rank < n.
template <class KeyAt>
void select(std::size_t n, const KeyAt& key_at, std::span<const Wanted> wanted,
            std::uint64_t* out) {
  if (wanted.empty()) return;
  if (n <= kSortBelow) {
    std::vector<std::uint64_t> keys(n);
    for (std::size_t i = 0; i < n; ++i)
      keys[i] = key_at(i);
    std::sort(keys.begin(), keys.end());
    for (const Wanted& w : wanted)
      out[w.slot] = keys[w.rank];
    return;
  }
  std::uint64_t lo = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = key_at(i);
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  if (lo == hi) {
    for (const Wanted& w : wanted)
      out[w.slot] = lo;
    return;
  }
  // At most 2^bucket_bits(n) buckets of 2^shift keys each.
  const unsigned width = static_cast<unsigned>(std::bit_width(hi - lo));
  const unsigned most = bucket_bits(n);
  const unsigned shift = width > most ? width - most : 0;
  const std::size_t buckets = static_cast<std::size_t>((hi - lo) >> shift) + 1;
  // first[b]: the rank of bucket b's smallest key.
  std::vector<std::size_t> first(buckets + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    ++first[static_cast<std::size_t>((key_at(i) - lo) >> shift) + 1];
  for (std::size_t b = 0; b < buckets; ++b)
    first[b + 1] += first[b];

  // The buckets holding a wanted rank. A bucket one key wide holds equal keys:
  // its value is known without looking further.
  struct Marked {
    std::size_t bucket;
    std::size_t begin, end;  // its wanted, in `wanted`
  };
  std::vector<Marked> marked;
  std::size_t b = 0;
  for (std::size_t w = 0; w < wanted.size();) {
    while (first[b + 1] <= wanted[w].rank)
      ++b;
    std::size_t end = w;
    while (end < wanted.size() && wanted[end].rank < first[b + 1])
      ++end;
    if (shift == 0) {
      for (std::size_t i = w; i < end; ++i)
        out[wanted[i].slot] = lo + b;
    } else {
      marked.push_back({b, w, end});
    }
    w = end;
  }
  if (marked.empty()) return;

  // The marked buckets' keys gathered, bucket by bucket.
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> next(buckets, kNone);
  std::size_t total = 0;
  for (const Marked& m : marked) {
    next[m.bucket] = total;
    total += first[m.bucket + 1] - first[m.bucket];
  }
  std::vector<std::uint64_t> gathered(total);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = key_at(i);
    std::size_t& at = next[static_cast<std::size_t>((k - lo) >> shift)];
    if (at != kNone) gathered[at++] = k;
  }
  std::vector<Wanted> inner;
  std::size_t offset = 0;
  for (const Marked& m : marked) {
    const std::size_t count = first[m.bucket + 1] - first[m.bucket];
    inner.clear();
    for (std::size_t i = m.begin; i < m.end; ++i)
      inner.push_back({wanted[i].rank - first[m.bucket], wanted[i].slot});
    select(count, ArrayKeys{gathered.data() + offset}, std::span<const Wanted>(inner), out);
    offset += count;
  }
}

}  // namespace order_statistics_detail

// The keys at `ranks` (0-based, in increasing key order; any order, repeats
// allowed, each below n) of the n keys key_at(0), ..., key_at(n - 1): out[i]
// is the key of rank ranks[i]. key_at is called a few times for each index.
template <class KeyAt>
std::vector<std::uint64_t> select_ranks(std::size_t n, const KeyAt& key_at,
                                        std::span<const std::size_t> ranks) {
  using order_statistics_detail::Wanted;
  std::vector<Wanted> wanted;
  wanted.reserve(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i)
    wanted.push_back({ranks[i], i});
  std::sort(wanted.begin(), wanted.end(),
            [](const Wanted& a, const Wanted& b) { return a.rank < b.rank; });
  std::vector<std::uint64_t> out(ranks.size());
  order_statistics_detail::select(n, key_at, std::span<const Wanted>(wanted), out.data());
  return out;
}

}  // namespace infersim
