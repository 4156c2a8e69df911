// Helpers for the per-request arrays (millions of elements): ask the kernel
// for transparent huge pages where it gives them on request, since a page
// fault a 4 KiB page dominates filling such an array on virtual machines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace infersim {

// Advises the kernel to back [data, data + bytes) with huge pages. Only whole
// 4 KiB pages inside the range are advised, and only for ranges of 4 MiB or
// more; a no-op where the system has no such advice.
void prefer_huge_pages(const void* data, std::size_t bytes);

// v.reserve(n), then prefer_huge_pages on the new capacity, before any of it
// is touched.
template <class Vector>
void reserve_large(Vector& v, std::size_t n) {
  v.reserve(n);
  prefer_huge_pages(v.data(), v.capacity() * sizeof(typename Vector::value_type));
}

}  // namespace infersim
