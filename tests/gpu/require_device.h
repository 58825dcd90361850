// GPU tests (label gpu) start with KC_REQUIRE_DEVICE(): without a usable device the
// test is skipped with the device probe's reason.
#pragma once

#include <gtest/gtest.h>

#include "kc/gpu/device.h"

#define KC_REQUIRE_DEVICE()                                        \
  do {                                                             \
    auto device_ = ::kc::gpu::probe_device();                      \
    if (!device_.ok()) GTEST_SKIP() << device_.status().message(); \
  } while (0)
