// The guarded allocation of host buffers (host_buffer.h). Layout, 64-byte aligned:
//   [header 64: magic, element bytes][front band kGuardBytes][elements][back band kGuardBytes]
// The bands are the bytes outside the storage asked for: spare capacity of a vector that
// grew is not checked (it may hold stale elements after a shrink); the harness hands a
// backend outputs allocated at their exact size, so their back band follows the last one.
#include "kc/host_buffer.h"

#include <cstring>
#include <string>

namespace kc {
namespace {

constexpr size_t kHeaderBytes = 64;
constexpr size_t kAlign = 64;
constexpr uint64_t kMagic = 0x6B63677561726421ull;  // "kcguard!"

struct Header {
  uint64_t magic;
  uint64_t bytes;  // the element storage asked for
};

unsigned char* base_of(const void* elements) {
  return static_cast<unsigned char*>(const_cast<void*>(elements)) - kGuardBytes - kHeaderBytes;
}

}  // namespace

namespace guard_detail {

void* allocate(size_t bytes) {
  const size_t total = kHeaderBytes + kGuardBytes + bytes + kGuardBytes;
  auto* base = static_cast<unsigned char*>(::operator new (total, std::align_val_t{kAlign}));
  std::memset(base, kGuardByte, kHeaderBytes + kGuardBytes);
  std::memset(base + kHeaderBytes + kGuardBytes + bytes, kGuardByte, kGuardBytes);
  const Header h{kMagic, bytes};
  std::memcpy(base, &h, sizeof h);
  return base + kHeaderBytes + kGuardBytes;
}

void deallocate(void* elements) noexcept {
  if (elements != nullptr) ::operator delete (base_of(elements), std::align_val_t{kAlign});
}

}  // namespace guard_detail

GuardDamage guard_damage(const void* elements, size_t used_bytes, size_t capacity_bytes) {
  GuardDamage d;
  if (elements == nullptr) return d;
  const unsigned char* base = base_of(elements);
  // The front band, then the header's padding after its two fields: both the pattern.
  for (size_t i = sizeof(Header); i < kHeaderBytes + kGuardBytes; ++i) {
    if (base[i] == kGuardByte) continue;
    ++d.bytes_before;
    d.nearest_before = static_cast<int64_t>(i) - static_cast<int64_t>(kHeaderBytes + kGuardBytes);
  }
  Header h;
  std::memcpy(&h, base, sizeof h);
  // A write that reached the header's fields: the size in it is not trusted (the back
  // band is found from the vector's own capacity, which must agree with it).
  if (h.magic != kMagic || h.bytes != capacity_bytes) {
    ++d.bytes_before;
    d.nearest_before = -static_cast<int64_t>(kHeaderBytes + kGuardBytes);
    return d;
  }
  const unsigned char* back = static_cast<const unsigned char*>(elements) + capacity_bytes;
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (back[i] == kGuardByte) continue;
    if (d.bytes_after++ == 0) d.first_after = static_cast<int64_t>(capacity_bytes - used_bytes + i);
  }
  return d;
}

std::string describe_guard_damage(const GuardDamage& d, size_t element_bytes, size_t elements) {
  auto num = [](int64_t v) { return std::to_string(v); };
  std::string where;
  auto bytes = [&](int64_t n) { return num(n) + (n == 1 ? " byte" : " bytes"); };
  if (d.bytes_before > 0) {
    where = bytes(d.bytes_before) + " before the first element changed, the nearest " + bytes(-d.nearest_before) +
            " before it";
  }
  if (d.bytes_after > 0) {
    if (!where.empty()) where += ", and ";
    // Counted from 0, element `elements` is the first one past the end.
    const int64_t element = static_cast<int64_t>(elements) + d.first_after / static_cast<int64_t>(element_bytes);
    where += bytes(d.bytes_after) + " after the last element changed, the first of them " +
             (d.first_after == 0 ? std::string("right after it") : bytes(d.first_after) + " past the end") +
             " (where element " + num(element) + " would be, counting from 0)";
  }
  return "the guard band around the buffer was overwritten: " + where + "; the backend wrote outside the " +
         num(static_cast<int64_t>(elements)) + " elements it was given";
}

// FNV-1a's step on 64-bit words, in four independent lanes (it runs at memory speed: the
// checks fingerprint every input before and after every call). Each step is a bijection
// of the lane in the word and in the lane, so a changed word always changes its lane's
// end state; the lanes are then mixed into one value.
uint64_t digest_bytes(const void* data, size_t bytes) {
  constexpr uint64_t kPrime = 1099511628211ull;
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t lane[4] = {1469598103934665603ull, 0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull, 0x94d049bb133111ebull};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * l, 8);
      lane[l] = (lane[l] ^ w) * kPrime;
    }
  }
  uint64_t h = lane[0];
  for (int l = 1; l < 4; ++l) h = (h ^ (lane[l] >> 29) ^ lane[l]) * kPrime;
  for (; i < bytes; ++i) h = (h ^ p[i]) * kPrime;  // the tail, byte by byte
  return h ^ static_cast<uint64_t>(bytes);
}

}  // namespace kc
