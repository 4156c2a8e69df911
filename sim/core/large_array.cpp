#include "core/large_array.hpp"

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

}  // namespace infersim
