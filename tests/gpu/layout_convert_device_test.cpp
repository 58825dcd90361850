// The CUTLASS engine's layout copies on a device (label gpu): NCHW -> NHWC puts every
// element where layout_map.h says, and back again gives the input bit for bit, NaN
// payloads included. Skipped with the device probe's reason where there is no device.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kc/gpu/device_buffer.h"
#include "kc/gpu/kernels.h"
#include "kc/gpu/layout_map.h"
#include "require_device.h"

namespace kc::gpu {
namespace {

TEST(LayoutConvertDevice, ChannelsLastAndBackIsBitwiseTheInput) {
  KC_REQUIRE_DEVICE();
  const LayoutShape s{3, 5, 7 * 9};  // N 3, C 5, 7x9: off every vector width
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

}  // namespace
}  // namespace kc::gpu
