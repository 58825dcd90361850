// Host f16/bf16 conversion of the GPU backends (kc/gpu/host_convert.h): every 16-bit
// pattern round-trips, and rounding from f32 agrees with the harness's own rounding
// (kc::round_to, through Eigen) on random, tie, subnormal and overflow values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kc/dtype.h"
#include "kc/gpu/host_convert.h"

namespace kc {
namespace {

using namespace gpu;

TEST(GpuHostConvert, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float f = f16_bits_to_f32(h), g = bf16_bits_to_f32(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_bits_to_f32(f32_to_f16_bits(f))));
    } else {
      ASSERT_EQ(f32_to_f16_bits(f), h) << std::hex << b;
    }
    if (std::isnan(g)) {
      EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(g))));
    } else {
      ASSERT_EQ(f32_to_bf16_bits(g), h) << std::hex << b;
    }
  }
}

void expect_rounds_like_harness(float v) {
  const double want16 = round_to(DType::kF16, v), wantb = round_to(DType::kBF16, v);
  const double got16 = f16_bits_to_f32(f32_to_f16_bits(v)), gotb = bf16_bits_to_f32(f32_to_bf16_bits(v));
  if (std::isnan(want16)) {
    EXPECT_TRUE(std::isnan(got16));
  } else {
    EXPECT_EQ(got16, want16) << v;
    EXPECT_EQ(std::signbit(got16), std::signbit(want16)) << v;
  }
  if (!std::isnan(wantb)) {
    EXPECT_EQ(gotb, wantb) << v;
  }
}

TEST(GpuHostConvert, RoundsLikeTheHarness) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> wide(-70000.f, 70000.f), narrow(-1e-4f, 1e-4f);
  for (int i = 0; i < 200000; ++i) {
    expect_rounds_like_harness(wide(rng));
    expect_rounds_like_harness(narrow(rng));
  }
  for (float v : {0.f, -0.f, 65504.f, 65519.f, 65520.f, 1e10f, -1e10f, 5.96e-8f, 2.98e-8f, 2.99e-8f, 6.1035e-5f,
                  1.0009765625f /* 1 + 2^-10: exact */, 1.00048828125f /* tie */, 1.00146484375f /* tie, rounds up */,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::denorm_min()}) {
    expect_rounds_like_harness(v);
  }
}

TEST(GpuHostConvert, TensorsRoundTripThroughDeviceBytes) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    Tensor t = Tensor::zeros(d, {2, 3, 5});
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    for (double& v : t.data) v = u(rng);
    t.data[3] = std::numeric_limits<double>::quiet_NaN();
    t.data[4] = -std::numeric_limits<double>::infinity();
    t.round_to_dtype(d);
    const std::vector<unsigned char> bytes = to_device_bytes(t, d);
    ASSERT_EQ(static_cast<int64_t>(bytes.size()), t.size() * device_bytes(d));
    Tensor back = Tensor::zeros(DType::kF64, t.shape);
    from_device_bytes(bytes.data(), d, back);
    EXPECT_EQ(back.dtype, d);
    EXPECT_TRUE(bitwise_equal(back, t) || std::isnan(back[3])) << dtype_name(d);
    for (int64_t i = 0; i < t.size(); ++i) {
      if (i != 3) {
        EXPECT_EQ(back[i], t[i]);
      }
    }
    EXPECT_TRUE(std::isnan(back[3]));
    EXPECT_FALSE(is_poison(back[3])) << "a NaN the device holds is a value, not the poison";
  }
  EXPECT_EQ(device_bytes(DType::kF64), 0);
}

// The device backends poison their output buffers with 0xFF bytes; an element left so
// comes back as the host poison, and CUDA's own NaNs (either sign) as ordinary NaNs.
TEST(GpuHostConvert, DevicePoisonBecomesTheHostPoison) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    const size_t w = static_cast<size_t>(device_bytes(d));
    std::vector<unsigned char> bytes(3 * w, 0xFF);
    const uint32_t nan32 = 0x7FFFFFFFu, neg32 = 0xFFC00000u;
    const uint16_t nan16 = 0x7FFF, neg16 = d == DType::kF16 ? 0xFE00 : 0xFFC0;
    if (w == 4) {
      std::memcpy(&bytes[4], &nan32, 4);
      std::memcpy(&bytes[8], &neg32, 4);
    } else {
      std::memcpy(&bytes[2], &nan16, 2);
      std::memcpy(&bytes[4], &neg16, 2);
    }
    Tensor back = Tensor::zeros(DType::kF64, {3});
    from_device_bytes(bytes.data(), d, back);
    EXPECT_TRUE(is_poison(back[0])) << dtype_name(d);
    for (int64_t i : {1, 2}) {
      EXPECT_TRUE(std::isnan(back[i])) << dtype_name(d) << " " << i;
      EXPECT_FALSE(is_poison(back[i])) << dtype_name(d) << " " << i;
    }
  }
}

}  // namespace
}  // namespace kc
