#include "core/large_array.hpp"

#include <array>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace infersim {

void prefer_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kPage = 4096;
  constexpr std::size_t kAtLeast = std::size_t{4} << 20;
  if (data == nullptr || bytes < kAtLeast) return;
  const auto from = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const auto to = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (to <= from) return;
  // Advice only: where it is refused, the pages are ordinary ones.
  (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

void radix_sort(std::vector<std::int64_t>& values, std::vector<std::int64_t>& scratch) {
  const std::size_t n = values.size();
  if (n < 2) return;
  // Keys as unsigned with the sign bit flipped, so that signed order is kept.
  constexpr std::uint64_t kFlip = std::uint64_t{1} << 63;
  auto key = [](std::int64_t v) { return static_cast<std::uint64_t>(v) ^ kFlip; };
  if (n < 256) {
    // Small: insertion sort beats six histograms of 2048 buckets.
    for (std::size_t i = 1; i < n; ++i) {
      const std::int64_t v = values[i];
      std::size_t j = i;
      for (; j > 0 && values[j - 1] > v; --j)
        values[j] = values[j - 1];
      values[j] = v;
    }
    return;
  }
  // 11-bit digits: 2048 buckets stay in the cache while scattering.
  constexpr unsigned kBits = 11;
  constexpr unsigned kDigits = 6;  // 66 bits
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  constexpr std::uint64_t kMask = kBuckets - 1;
  std::vector<std::array<std::uint32_t, kDigits>> counts(kBuckets);
  std::vector<std::size_t> offsets(kBuckets);
  // Counts of every digit in one pass; a digit shared by every value is skipped.
  for (const std::int64_t v : values) {
    const std::uint64_t k = key(v);
    for (unsigned d = 0; d < kDigits; ++d)
      ++counts[(k >> (kBits * d)) & kMask][d];
  }
  scratch.resize(n);
  std::vector<std::int64_t>* from = &values;
  std::vector<std::int64_t>* to = &scratch;
  for (unsigned d = 0; d < kDigits; ++d) {
    const std::uint64_t first = (key(values.front()) >> (kBits * d)) & kMask;
    if (counts[first][d] == n) continue;
    std::size_t sum = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      offsets[b] = sum;
      sum += counts[b][d];
    }
    for (const std::int64_t v : *from)
      (*to)[offsets[(key(v) >> (kBits * d)) & kMask]++] = v;
    std::swap(from, to);
  }
  if (from != &values) values.swap(scratch);
}

void radix_sort(std::vector<std::int64_t>& values) {
  std::vector<std::int64_t> scratch;
  radix_sort(values, scratch);
}

}  // namespace infersim
