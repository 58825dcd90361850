// Guard bands around host buffers (host_buffer.h): intact after writes inside the
// elements, and every write before the first or past the last one is found, with its
// offset; copies and moves keep working buffers.
#include "kc/host_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kc/tensor.h"

namespace {

using kc::GuardDamage;
using kc::HostVector;

TEST(HostBuffer, ElementsAreAlignedAndBandsStartIntact) {
  HostVector<double> v(37, 1.5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u);
  for (double& e : v) e = -e;  // writes inside the elements touch no band
  EXPECT_TRUE(kc::guard_damage(v).intact());
  EXPECT_TRUE(kc::guard_damage(HostVector<double>{}).intact());  // no storage, nothing to check
}

TEST(HostBuffer, FindsAWriteOneElementPastTheEnd) {
  HostVector<double> v(10, 0.0);
  double* raw = v.data();
  raw[10] = 3.0;  // into the back band, which the allocation owns
  const GuardDamage d = kc::guard_damage(v);
  EXPECT_FALSE(d.intact());
  EXPECT_EQ(d.bytes_before, 0);
  EXPECT_GT(d.bytes_after, 0);
  EXPECT_LE(d.bytes_after, 8);
  EXPECT_EQ(d.first_after / 8, 0);  // the first element past the end
}

TEST(HostBuffer, FindsAWriteBeforeTheFirstElement) {
  HostVector<int64_t> v(4, 7);
  int64_t* raw = v.data();
  raw[-2] = 0;
  const GuardDamage d = kc::guard_damage(v);
  EXPECT_EQ(d.bytes_before, 8);
  EXPECT_EQ(d.nearest_before, -9);  // element -2 ends 9 bytes before the first one
  EXPECT_EQ(d.bytes_after, 0);
}

// A write into the header (its recorded size) or its padding is found, and the size in
// it is not trusted to find the back band.
TEST(HostBuffer, FindsAWriteIntoTheHeader) {
  HostVector<double> v(8, 0.0);
  double* raw = v.data();
  raw[-39] = 1e300;  // bytes -312..-305: the header's size field
  GuardDamage d = kc::guard_damage(v);
  EXPECT_GT(d.bytes_before, 0);
  EXPECT_EQ(d.bytes_after, 0);
  HostVector<double> w(8, 0.0);
  w.data()[-36] = 1.0;  // bytes -288..-281: the header's padding, before the front band
  d = kc::guard_damage(w);
  EXPECT_EQ(d.bytes_before, 8);
  EXPECT_EQ(d.nearest_before, -281);
}

TEST(HostBuffer, FindsAFarWriteAndTheFirstOfSeveral) {
  HostVector<double> v(3, 0.0);
  double* raw = v.data();
  raw[3 + 20] = 1.0;
  raw[3 + 5] = 1.0;
  const GuardDamage d = kc::guard_damage(v);
  EXPECT_EQ(d.first_after / 8, 5);
}

TEST(HostBuffer, CopiesAndMovesKeepIntactBands) {
  HostVector<double> a(100, 2.0);
  HostVector<double> b = a;
  b.push_back(1.0);  // grows into a new allocation
  HostVector<double> c = std::move(b);
  EXPECT_TRUE(kc::guard_damage(a).intact());
  EXPECT_TRUE(kc::guard_damage(c).intact());
  EXPECT_EQ(c.size(), 101u);
  EXPECT_EQ(c[100], 1.0);
}

TEST(HostBuffer, TensorsUseGuardedStorage) {
  kc::Tensor t = kc::poisoned(kc::DType::kF32, {2, 3});
  t.data.data()[6] = 0.0;  // one past the last of 6
  EXPECT_FALSE(kc::guard_damage(t.data).intact());
}

// The fingerprint that tells a backend wrote into an input: every single-bit change of
// a buffer changes it, in the word-wise lanes and in the byte-wise tail, and so does
// the length (a zero byte appended).
TEST(Digest, EverySingleBitFlipChangesIt) {
  for (size_t bytes : {1u, 7u, 31u, 32u, 33u, 64u, 100u}) {
    std::vector<unsigned char> buf(bytes);
    for (size_t i = 0; i < bytes; ++i) buf[i] = static_cast<unsigned char>(i * 37 + 11);
    const uint64_t base = kc::digest_bytes(buf.data(), bytes);
    for (size_t i = 0; i < bytes; ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        buf[i] ^= static_cast<unsigned char>(1u << bit);
        EXPECT_NE(kc::digest_bytes(buf.data(), bytes), base) << bytes << " bytes, byte " << i << " bit " << bit;
        buf[i] ^= static_cast<unsigned char>(1u << bit);
      }
    }
    buf.push_back(0);
    EXPECT_NE(kc::digest_bytes(buf.data(), bytes + 1), base) << bytes;
  }
}

}  // namespace
