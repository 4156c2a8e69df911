// Helpers for the per-request arrays (millions of elements): ask the kernel
// for transparent huge pages where it gives them on request, since a page
// fault a 4 KiB page dominates filling such an array on virtual machines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
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

// An allocator that leaves elements of an implicit-lifetime type (trivially
// copyable and destructible) unwritten where a vector would value-initialize
// them, so that resize() touches no page: the threads that fill the parts of
// a large array then fault in their own pages, and no page is written twice.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    if constexpr (!(std::is_trivially_copyable_v<U> && std::is_trivially_destructible_v<U>)) {
      ::new (static_cast<void*>(p)) U();
    }
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A vector whose resize() leaves the new elements of an implicit-lifetime
// type unwritten: the caller writes every one before reading it.
template <class T>
using LargeVector = std::vector<T, UninitializedAllocator<T>>;

}  // namespace infersim
