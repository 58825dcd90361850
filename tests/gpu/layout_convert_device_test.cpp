// The CUTLASS engine's layout copies on a device (label gpu): NCHW -> NHWC puts every
// element where layout_map.h says, and back again gives the input bit for bit, NaN
// payloads included, across tile edges and past the grid's limits; the f32 weight
// gradient comes back rounded to nearest even. Skipped with the device probe's reason where there is no device.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kc/gpu/device_buffer.h"
#include "kc/gpu/host_convert.h"
#include "kc/gpu/kernels.h"
#include "kc/gpu/layout_map.h"
#include "require_device.h"

namespace kc::gpu {
namespace {

void expect_round_trip(const LayoutShape& s) {
  std::vector<uint16_t> x(static_cast<size_t>(s.size()));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(0x7F81 + i % 127);  // bf16 NaNs, each payload
  const int64_t bytes = s.size() * 2;
  auto src = DeviceBuffer::allocate(bytes, "x"), last = DeviceBuffer::allocate(bytes, "x channels-last"),
       back = DeviceBuffer::allocate(bytes, "x back");
  ASSERT_TRUE(src.ok() && last.ok() && back.ok());
  ASSERT_TRUE(src->upload(x.data(), bytes).ok());
  ASSERT_TRUE(launch_to_channels_last(DType::kBF16, s, src->data(), last->data()).ok());
  ASSERT_TRUE(launch_to_channels_first(DType::kBF16, s, last->data(), back->data()).ok());
  std::vector<uint16_t> got_last(x.size()), got_back(x.size());
  ASSERT_TRUE(last->download(got_last.data(), bytes).ok());
  ASSERT_TRUE(back->download(got_back.data(), bytes).ok());
  for (int64_t i = 0; i < s.size(); ++i) {
    ASSERT_EQ(got_last[static_cast<size_t>(channels_last_index(s, i))], x[static_cast<size_t>(i)]) << i;
  }
  EXPECT_EQ(got_back, x);
  EXPECT_TRUE(src->check_guards().ok() && last->check_guards().ok() && back->check_guards().ok());
}

TEST(LayoutConvertDevice, ChannelsLastAndBackIsBitwiseTheInput) {
  KC_REQUIRE_DEVICE();
  expect_round_trip({3, 5, 7 * 9});  // N 3, C 5, 7x9: off every vector width, inside one 32x32 tile
  expect_round_trip({2, 37, 70});    // several tiles, each dim with a partial last one
  expect_round_trip({70000, 8, 1});  // more blocks than the grid's y (65535)
}

// dw summed in f32 channels-last comes back channels-first, rounded once to bf16.
TEST(LayoutConvertDevice, TheF32WeightGradientIsRoundedOnTheWayBack) {
  KC_REQUIRE_DEVICE();
  const LayoutShape s{9, 33, 9};  // K 9, C 33, 3x3 taps
  std::vector<float> dw(static_cast<size_t>(s.size()));
  for (size_t i = 0; i < dw.size(); ++i) dw[i] = 1.0f + static_cast<float>(i) / 4096.0f;  // most need rounding
  auto src = DeviceBuffer::allocate(s.size() * 4, "dw f32"), dst = DeviceBuffer::allocate(s.size() * 2, "dw bf16");
  ASSERT_TRUE(src.ok() && dst.ok());
  ASSERT_TRUE(src->upload(dw.data(), s.size() * 4).ok());
  ASSERT_TRUE(
      launch_to_channels_first_rounded(DType::kBF16, s, static_cast<const float*>(src->data()), dst->data()).ok());
  std::vector<uint16_t> got(dw.size());
  ASSERT_TRUE(dst->download(got.data(), s.size() * 2).ok());
  for (int64_t i = 0; i < s.size(); ++i) {
    const float v = dw[static_cast<size_t>(channels_last_index(s, i))];
    ASSERT_EQ(got[static_cast<size_t>(i)], f32_to_bf16_bits(v)) << i;
  }
}

}  // namespace
}  // namespace kc::gpu
