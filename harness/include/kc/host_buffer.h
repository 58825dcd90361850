// Host buffers with guard bands (the `integrity` check: docs/checks.md, "Notes on individual checks").
// Every Tensor and IndexTensor keeps its elements in a HostVector, whose allocator puts
// kGuardBytes of a fixed byte pattern before and after the storage it hands out. After a
// call, guard_damage() finds the bytes of those bands that changed: a backend that wrote
// before the first element or past the last one of the storage (a vector's capacity;
// the harness allocates outputs at their exact size). The bands belong to the
// allocation, so reading them is defined behaviour, and a plain std::vector's overrun
// (silent heap damage) becomes a named finding.
// Invariants: the elements are 64-byte aligned; a header before the front band holds
// the allocation's size, which guard_damage() checks against the vector's capacity.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace kc {

inline constexpr size_t kGuardBytes = 256;
inline constexpr unsigned char kGuardByte = 0xFD;

namespace guard_detail {
void* allocate(size_t bytes);  // the element storage, bands and header around it
void deallocate(void* elements) noexcept;
}  // namespace guard_detail

// What changed around one buffer of `used_bytes` (its size() in bytes). Offsets are in bytes from the first element
// (before: negative) or from the end of the used elements (after: 0 is the first byte
// past the last element).
struct GuardDamage {
  int64_t bytes_before = 0;    // changed bytes in the front band
  int64_t bytes_after = 0;     // changed bytes in the back band
  int64_t nearest_before = 0;  // the changed front byte closest to the elements (< 0)
  int64_t first_after = -1;    // the first changed byte past the end (>= 0)
  bool intact() const { return bytes_before == 0 && bytes_after == 0; }
};

// `elements` must come from a GuardedAllocator with `capacity_bytes` of storage (or be
// null: an empty vector, intact). A header whose recorded size disagrees with the
// capacity counts as damage before the elements (the back band is then not read).
GuardDamage guard_damage(const void* elements, size_t used_bytes, size_t capacity_bytes);

// "the guard band around the buffer was overwritten, 8 byte(s) past the last element
// changed (...): the backend wrote outside the 6 elements it was given"; `d` not intact.
std::string describe_guard_damage(const GuardDamage& d, size_t element_bytes, size_t elements);

template <class T>
struct GuardedAllocator {
  using value_type = T;
  GuardedAllocator() noexcept = default;
  template <class U>
  GuardedAllocator(const GuardedAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > (SIZE_MAX - 4 * kGuardBytes) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(guard_detail::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) noexcept { guard_detail::deallocate(p); }
  template <class U>
  bool operator==(const GuardedAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using HostVector = std::vector<T, GuardedAllocator<T>>;

// Element by element against a plain vector (found by argument-dependent lookup), so
// that `t.data == std::vector<double>{...}` reads as it would with std::vector.
template <class T>
bool operator==(const HostVector<T>& a, const std::vector<T>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

template <class T>
GuardDamage guard_damage(const HostVector<T>& v) {
  return guard_damage(v.data(), v.size() * sizeof(T), v.capacity() * sizeof(T));
}

template <class T>
std::string describe_guard_damage(const HostVector<T>& v, const GuardDamage& d) {
  return describe_guard_damage(d, sizeof(T), v.size());
}

// A 64-bit hash of `bytes` bytes: a changed buffer changes it (but for a collision). The
// fingerprint a stack run keeps of a buffer no call may write (stack_schedule.h).
uint64_t digest_bytes(const void* data, size_t bytes);

template <class T>
uint64_t digest(const HostVector<T>& v) {
  return digest_bytes(v.data(), v.size() * sizeof(T));
}

}  // namespace kc
