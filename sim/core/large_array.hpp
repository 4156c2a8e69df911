// Helpers for the per-request arrays (millions of elements): ask the kernel
// for transparent huge pages where it gives them on request, since a page
// fault a 4 KiB page dominates filling such an array on virtual machines; and
// sort non-negative or signed 64-bit keys by radix, several times faster than
// a comparison sort at these sizes.
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

// Sorts the values in increasing order: a least-significant-digit radix sort
// on 11-bit digits, skipping the digits every value shares. `scratch` is
// resized to values.size() and used as the second buffer.
void radix_sort(std::vector<std::int64_t>& values, std::vector<std::int64_t>& scratch);
void radix_sort(std::vector<std::int64_t>& values);

}  // namespace infersim
