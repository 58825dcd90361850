// Tests of validate_limits.cpp: absurd sizes are refused as resource_exhausted before
// anything is allocated; the memory cap (Limits, KC_MAX_CASE_BYTES) and the work cap
// (KC_MAX_OP_WORK) are honoured; saturating arithmetic at the int64 edge.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "core/validate.h"
#include "core/validate_support.h"
#include "kc/case.h"

// Largest single heap request since the last reset: proves that validation of an absurd
// case allocates nothing of its size (replaces the global operator new of this binary).
static std::atomic<size_t> g_largest_alloc{0};
void* operator new(size_t n) {
  for (size_t m = g_largest_alloc.load(); n > m && !g_largest_alloc.compare_exchange_weak(m, n);) {
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// Not inlined, so that GCC does not pair free() with `new` (-Wmismatched-new-delete).
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace kc {
namespace {

using namespace validate_test;

// Sizes read in binary units, and exactly where rounding would make the need and the cap
// read the same.
TEST(ValidateResources, MemoryRefusalsNeverReadAsEqualToTheCap) {
  Case c = conv_case();
  c.input.batch = 100'000;
  const int64_t bytes = estimate_case_bytes(c);
  Limits limits;
  limits.max_case_bytes = bytes - 1;
  const Status s = validate(c, limits);
  EXPECT_NE(s.message().find(": the case needs " + std::to_string(bytes) + " bytes of host memory, over the cap of " +
                             std::to_string(bytes - 1) + " bytes: "),
            std::string::npos)
      << s.message();
  limits.max_case_bytes = bytes / 2;
  const std::string halved = validate(c, limits).message();
  EXPECT_EQ(halved.find(std::to_string(bytes)), std::string::npos) << halved;
  EXPECT_NE(halved.find("iB of host memory, over the cap of "), std::string::npos) << halved;
}

// Sizes that would need terabytes are refused from the arithmetic alone: the test
// finishes in well under a second, which it could not if anything were allocated.
TEST(ValidateResources, AbsurdSizesRefusedBeforeAllocation) {
  const auto start = std::chrono::steady_clock::now();
  g_largest_alloc = 0;
  Case big_batch = conv_case();
  big_batch.input.batch = 1'000'000'000;
  expect_error(big_batch, StatusCode::kResourceExhausted,
               {"about 122 TiB of host memory, over the cap of 4 GiB", "KC_MAX_CASE_BYTES"});
  Case big_plane = conv_case();
  big_plane.input.spatial = {1'000'000, 1'000'000};
  expect_error(big_plane, StatusCode::kResourceExhausted, {"host memory"});
  Case big_pool = pool_case();
  big_pool.input.spatial = {1'000'000, 1'000'000};
  pool(big_pool).stride = {1, 1};
  expect_error(big_pool, StatusCode::kResourceExhausted, {"host memory"});
  Case huge_3d = conv_case();  // products that overflow int64 must saturate, not wrap
  huge_3d.input.spatial = {2'000'000'000, 2'000'000'000, 2'000'000'000};
  conv(huge_3d).kernel = {1, 1, 1};
  conv(huge_3d).padding.pairs = {};
  conv(huge_3d).out_channels = 2'000'000'000;
  conv(huge_3d).groups = 1;
  huge_3d.input.channels = 2'000'000'000;
  expect_error(huge_3d, StatusCode::kResourceExhausted, {"host memory"});
  EXPECT_EQ(estimate_case_bytes(huge_3d), kMax);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 500) << "validation of absurd sizes took " << ms << " ms";
  EXPECT_LT(g_largest_alloc.load(), size_t{1} << 16) << "a large buffer was allocated";
  ::operator delete(::operator new (size_t{1} << 20));  // the tracker itself works
  EXPECT_GE(g_largest_alloc.load(), size_t{1} << 20);
}

TEST(ValidateResources, SingleSizeOverTheLimit) {
  Case c = conv_case();
  c.input.batch = (int64_t{1} << 31) + 1;
  expect_error(c, StatusCode::kResourceExhausted, {"input.batch", "size limit"});
  c = conv_case();
  c.input.spatial = {8, 200};
  expect_error(c, StatusCode::kResourceExhausted, {"input.spatial[1]", "200", "size limit 100"},
               Limits{int64_t{1} << 30, 100});
}

// Little memory, absurd work: a window of a million on two million points is 1e12
// comparisons per forward, refused instead of timing out as if the kernel hung.
TEST(ValidateResources, WorkCapRefusesCasesThatWouldOnlyTimeOut) {
  Case c;
  c.input = {1, 1, {2000000}};
  c.op = MaxPoolParams{{1000000}, {1}, {}, {}, false, PoolMode::kInference, TieRule::kFirst};
  expect_error(c, StatusCode::kResourceExhausted, {"1e+12 comparisons", "over the cap of 6.87e+10"});
  c.op = MaxPoolParams{{1000}, {1}, {}, {}, false, PoolMode::kInference, TieRule::kFirst};
  expect_ok(c, default_limits());
  Case conv;  // 2^37 multiply-adds: 2^10 channels in and out on 2^17 outputs, kernel 1
  conv.input = {1, 1024, {int64_t{1} << 17}};
  conv.op = ConvParams{1024, {1}, {}, {}, 1, {}};
  Limits roomy;
  roomy.max_case_bytes = int64_t{1} << 50;
  expect_error(conv, StatusCode::kResourceExhausted, {"1.37e+11 multiply-adds"}, roomy);
  Case cube;  // 2^90 outputs: counted in double, where int64 products would overflow
  const int64_t e = int64_t{1} << 30;
  cube.input = {1, 1, {e, e, e}};
  cube.op = MaxPoolParams{{1, 1, 1}, {1, 1, 1}, {}, {}, false, PoolMode::kInference, TieRule::kFirst};
  roomy.max_case_bytes = std::numeric_limits<int64_t>::max();
  expect_error(cube, StatusCode::kResourceExhausted, {"1.24e+27 comparisons"}, roomy);
}

// The work cap holds for a stack as a whole: 1000 layers of 64 channels on 64x64 with
// a 9x9 kernel are 1.36e9 multiply-adds each, under the cap, and 1.36e12 in all, 20
// times over it (accepted when the cap was checked per layer). A single layer over the
// cap is named by the stack's total too, not as "stack layer 1".
TEST(ValidateResources, WorkCapHoldsForTheWholeStack) {
  Case c;
  c.input = {1, 64, {64, 64}};
  StackParams p{1000, ConvParams{64, {9, 9}, {}, {}, 1, {PadKind::kSame, {}}}};
  p.relu = true;
  c.op = p;
  Limits roomy;
  roomy.max_case_bytes = int64_t{300} << 30;
  expect_error(c, StatusCode::kResourceExhausted,
               {"stack.depth: one forward through the stack's 1000 layers takes about 1.36e+12 multiply-adds",
                "the largest layer, 1, takes 1.36e+09", "over the cap of 6.87e+10", "KC_MAX_OP_WORK"},
               roomy);
  std::get<StackParams>(c.op).depth = 50;  // 6.8e10: under the cap
  expect_ok(c, roomy);
  std::get<StackParams>(c.op).depth = 51;
  expect_error(c, StatusCode::kResourceExhausted, {"stack's 51 layers takes about 6.93e+10"}, roomy);
  Case pooled;  // a layer's max pool counts its comparisons: 8 layers of 1.7e10 + 1.3e8
  pooled.input = {1, 1, {int64_t{1} << 26}};
  StackParams q{8, ConvParams{1, {256}, {}, {}, 1, {PadKind::kSame, {}}}};
  q.pool = MaxPoolParams{{2}, {1}, {}, {PadKind::kSame, {}}};
  pooled.op = q;
  roomy.max_case_bytes = std::numeric_limits<int64_t>::max();
  expect_error(pooled, StatusCode::kResourceExhausted, {"multiply-adds and comparisons"}, roomy);
  std::get<StackParams>(pooled.op).depth = 1;  // one layer over the cap: its sizes, not the depth
  roomy.max_op_work = 1e10;
  const Status s = validate(pooled, roomy);
  EXPECT_NE(s.message().find("stack.layer.conv: one forward through layer 1 alone takes about 1.73e+10"),
            std::string::npos)
      << s.to_string();
  EXPECT_NE(s.message().find("(sizes too large;"), std::string::npos) << s.to_string();
  EXPECT_EQ(s.message().find("stack.depth"), std::string::npos) << s.to_string();
  EXPECT_EQ(s.message().find("stack layer"), std::string::npos) << s.to_string();
}

TEST(ValidateResources, CaseBytesCapIsHonoured) {
  // [1, 1, 4, 4], 3x3 valid -> y [1, 1, 2, 2]. The reference and a candidate each hold
  // x, w, y and their gradients in f64: at least 2 * 2 * (16 + 9 + 4) * 8 = 928 bytes.
  Case c;
  c.input = {1, 1, {4, 4}};
  c.op = ConvParams{1, {3, 3}, {}, {}, 1, {}};
  const int64_t bytes = estimate_case_bytes(c);
  EXPECT_GE(bytes, 928);
  EXPECT_LT(bytes, 1 << 20);
  Limits limits;
  limits.max_case_bytes = bytes;
  expect_ok(c, limits);
  limits.max_case_bytes = bytes - 1;
  expect_error(c, StatusCode::kResourceExhausted, {"host memory", "over the cap"}, limits);
  limits.max_case_bytes = 900;  // below the lower bound
  expect_error(c, StatusCode::kResourceExhausted, {"KC_MAX_CASE_BYTES"}, limits);
  // Doubling the batch doubles x and y: the estimate grows.
  Case twice = c;
  twice.input.batch = 2;
  EXPECT_GT(estimate_case_bytes(twice), bytes);
}

// A refusal names the part of the estimate that needs the most, its shape and the
// field that makes it large (all of these said "input: the case needs about ..."), and
// an estimate past int64 says so instead of printing INT64_MAX.
TEST(ValidateResources, MemoryRefusalNamesThePartAndTheFieldThatMakeItLarge) {
  Case dilated;  // padding same for dilation 2^31 - 1: 2^32 - 2 padded positions per dim
  dilated.input = {1, 1, {8, 8}};
  dilated.op = ConvParams{1, {3, 3}, {}, {2147483647, 2147483647}, 1, {PadKind::kSame, {}}};
  expect_error(dilated, StatusCode::kResourceExhausted,
               {"conv.dilation: the case needs more host memory than a 64-bit byte count holds",
                "padded x and its gradient [1, 1, 4294967302, 4294967302] alone has more elements",
                "conv.dilation 2147483647, for which padding same pads 2147483647/2147483647 in dim 0"});
  EXPECT_EQ(validate(dilated).message().find("9223372036854775807"), std::string::npos);
  EXPECT_EQ(validate(dilated).message().find("8796093022207"), std::string::npos);
  Case wide;  // a 31x31 kernel: the reference's im2col is 961 times the input
  wide.input = {1, 64, {512, 512}};
  wide.op = ConvParams{64, {31, 31}, {}, {}, 1, {PadKind::kSame, {}}};
  expect_error(wide, StatusCode::kResourceExhausted,
               {"conv.kernel: the case needs about 608 GiB of host memory, over the cap of 4 GiB",
                "im2col workspace (Cin/G, kernel, out) [64, 31, 31, 512, 512], made large by conv.kernel [31, 31]"});
  Case padded;  // replicate padding of 100000 on an 8x8 input
  padded.input = {1, 1, {8, 8}};
  ConvParams p{1, {3, 3}, {}, {}, 1, {PadKind::kExplicit, {{100000, 100000}, {100000, 100000}}}};
  p.padding_mode = PaddingMode::kReplicate;
  padded.op = p;
  expect_error(padded, StatusCode::kResourceExhausted,
               {"conv.padding: the case needs about", "[1, 3, 3, 200006, 200006]",
                "conv.padding, which pads 100000/100000 in dim 0"});
  Case channels = conv_case();  // y holds 2^28 times as many channels as x
  conv(channels).out_channels = int64_t{1} << 30;
  expect_error(channels, StatusCode::kResourceExhausted,
               {"conv.out_channels: the case needs", "y and dy [2, 1073741824, 8, 8]", "conv.out_channels 1073741824"});
  Case batch = conv_case();  // y is 1.5 times x, but a batch of 10^9 is too large on its own
  batch.input.batch = 1'000'000'000;
  expect_error(batch, StatusCode::kResourceExhausted, {"input: the case needs", "input (batch 1000000000, channels 4"});
  Case big_pool = pool_case();
  big_pool.input.spatial = {1'000'000, 1'000'000};
  expect_error(big_pool, StatusCode::kResourceExhausted,
               {"input: the case needs", "x and dx [1, 2, 1000000, 1000000]"});
}

// A stack: its largest layer's largest part, blamed on the depth where one layer fits.
TEST(ValidateResources, StackMemoryRefusalNamesItsLargestLayer) {
  Case c;
  c.input = {1, 64, {64, 64}};
  c.op = StackParams{1000, ConvParams{64, {9, 9}, {}, {}, 1, {PadKind::kSame, {}}}};
  Limits limits;
  limits.max_op_work = 1e15;
  expect_error(
      c, StatusCode::kResourceExhausted,
      {"stack.depth: the stack needs about 189 GiB of host memory over its 1000 layers",
       "its largest layer, 1, needs about 193 MiB",
       "im2col workspace (Cin/G, kernel, out) [64, 9, 9, 64, 64], made large by stack.layer.conv.kernel [9, 9]"},
      limits);
  c.input = {1, 64, {512, 512}};  // one layer alone is over the cap: its field
  c.op = StackParams{1, ConvParams{64, {31, 31}, {}, {}, 1, {PadKind::kSame, {}}}};
  expect_error(c, StatusCode::kResourceExhausted, {"stack.layer.conv.kernel: the stack needs about"}, limits);
}

// Sets an environment variable for one scope and restores it.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ValidateResources, DefaultLimitsReadEnvironment) {
  {
    ScopedEnv env("KC_MAX_CASE_BYTES", nullptr);
    EXPECT_EQ(default_limits().max_case_bytes, int64_t{4} << 30);
  }
  {
    ScopedEnv env("KC_MAX_CASE_BYTES", "5000");
    EXPECT_EQ(default_limits().max_case_bytes, 5000);
    Case c = conv_case();  // needs more than 5000 bytes (x alone is 512 doubles)
    EXPECT_EQ(validate(c).code(), StatusCode::kResourceExhausted);
  }
  {
    ScopedEnv env("KC_MAX_CASE_BYTES", "8G");  // suffixes are binary multiples
    EXPECT_EQ(default_limits().max_case_bytes, int64_t{8} << 30);
  }
  for (const char* bad : {"", "abc", "-5", "0", "8Gb", "12x", " 5", "+5", "9223372036854775807G"}) {
    ScopedEnv env("KC_MAX_CASE_BYTES", bad);
    EXPECT_EQ(default_limits().max_case_bytes, int64_t{4} << 30) << "'" << bad << "'";
  }
}

// A value default_limits() cannot use is named, so that tools refuse it; unset, empty
// (the shell's way of unsetting) and usable values are fine.
TEST(ValidateResources, UnusableEnvironmentLimitIsNamed) {
  for (const char* fine : {static_cast<const char*>(nullptr), "", "5000", "8G", "512M", "64K"}) {
    ScopedEnv env("KC_MAX_CASE_BYTES", fine);
    EXPECT_TRUE(limits_environment_problem().ok()) << (fine ? fine : "(unset)");
  }
  for (const char* bad : {"abc", "-5", "0", "8Gb", "12x", " 5", "9223372036854775807G"}) {
    ScopedEnv env("KC_MAX_CASE_BYTES", bad);
    const Status s = limits_environment_problem();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(),
              "KC_MAX_CASE_BYTES: expected a positive byte count with an optional K, M or G suffix "
              "(e.g. 8G), got '" +
                  std::string(bad) + "'");
  }
}

// KC_MAX_OP_WORK raises the work cap (a ResNet-sized layer, batch 64, is 1.2e11) and is
// read as strictly as KC_MAX_CASE_BYTES.
TEST(ValidateResources, WorkCapFromTheEnvironment) {
  {
    ScopedEnv env("KC_MAX_OP_WORK", "1024G");
    EXPECT_EQ(default_limits().max_op_work, 1099511627776.0);
    EXPECT_TRUE(limits_environment_problem().ok());
  }
  ScopedEnv env("KC_MAX_OP_WORK", "lots");
  const Status s = limits_environment_problem();
  EXPECT_EQ(s.message(),
            "KC_MAX_OP_WORK: expected a positive count with an optional K, M or G suffix (e.g. 8G), "
            "got 'lots'");
  EXPECT_EQ(default_limits().max_op_work, Limits{}.max_op_work);
}

TEST(ValidateArithmetic, SaturatingAtTheInt64Edge) {
  EXPECT_EQ(saturating_mul(0, kMax), 0);
  EXPECT_EQ(saturating_mul(kMax, 0), 0);
  EXPECT_EQ(saturating_mul(kMax, 1), kMax);
  EXPECT_EQ(saturating_mul(1, kMax), kMax);
  EXPECT_EQ(saturating_mul(kMax, 2), kMax);
  EXPECT_EQ(saturating_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(saturating_mul(int64_t{1} << 32, int64_t{1} << 31), kMax);  // exactly 2^63
  // floor(sqrt(2^63 - 1)) = 3037000499: its square fits, the next one does not.
  EXPECT_EQ(saturating_mul(3037000499, 3037000499), 9223372030926249001);
  EXPECT_EQ(saturating_mul(3037000500, 3037000500), kMax);
  EXPECT_EQ(saturating_mul(kMax / 3, 3), kMax - 1);  // 2^63 - 1 = 3 * 3074457345618258602 + 1
  EXPECT_EQ(saturating_mul(kMax / 3 + 1, 3), kMax);
  EXPECT_EQ(saturating_add(0, 0), 0);
  EXPECT_EQ(saturating_add(kMax, 0), kMax);
  EXPECT_EQ(saturating_add(0, kMax), kMax);
  EXPECT_EQ(saturating_add(kMax - 1, 1), kMax);
  EXPECT_EQ(saturating_add(kMax - 5, 3), kMax - 2);
  EXPECT_EQ(saturating_add(kMax, 1), kMax);
  EXPECT_EQ(saturating_add(int64_t{1} << 62, int64_t{1} << 62), kMax);
  EXPECT_EQ(saturating_add(kMax, kMax), kMax);
}

}  // namespace
}  // namespace kc
