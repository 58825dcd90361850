// Tests of kc/validate.h: every rule of DESIGN sections 3 and 5 gives an error naming
// the field and the rule; absurd sizes are refused as resource_exhausted before anything
// is allocated; the memory cap (Limits, KC_MAX_CASE_BYTES) is honoured; saturating
// arithmetic at the int64 edge; inline tensor shapes; pool window rules against brute
// force, and validation time linear in the number of windows.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "kc/case.h"
#include "kc/shape.h"
#include "kc/validate.h"

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

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// A valid conv: [2, 4, 8, 8] -> 6 channels, 3x3, groups 2, pad 1 (y [2, 6, 8, 8]).
Case conv_case() {
  Case c;
  c.input = {2, 4, {8, 8}};
  c.op = ConvParams{6, {3, 3}, {}, {}, 2, {PadKind::kExplicit, {{1, 1}, {1, 1}}}};
  return c;
}
ConvParams& conv(Case& c) { return std::get<ConvParams>(c.op); }

// A valid max pool: [1, 2, 9, 9], 3x3 window, stride 2, pad 1 (y [1, 2, 5, 5]).
Case pool_case() {
  Case c;
  c.input = {1, 2, {9, 9}};
  c.op = MaxPoolParams{{3, 3}, {2, 2}, {}, {PadKind::kExplicit, {{1, 1}, {1, 1}}}};
  return c;
}
MaxPoolParams& pool(Case& c) { return std::get<MaxPoolParams>(c.op); }

void expect_ok(const Case& c, const Limits& limits = Limits{}) {
  const Status s = validate(c, limits);
  EXPECT_TRUE(s.ok()) << s.to_string();
}

// The error has `code` and its message contains every part (field and rule).
void expect_error(const Case& c, StatusCode code, std::initializer_list<const char*> parts,
                  const Limits& limits = Limits{}) {
  const Status s = validate(c, limits);
  ASSERT_FALSE(s.ok()) << "accepted; wanted an error with " << *parts.begin();
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const char* part : parts) {
    EXPECT_NE(s.message().find(part), std::string::npos) << "'" << part << "' not in: " << s.message();
  }
}

TEST(Validate, AcceptsValidCases) {
  expect_ok(conv_case());
  expect_ok(pool_case());
  Case cbr = conv_case();
  cbr.op = ConvBiasReluParams{conv(cbr)};
  expect_ok(cbr);
}

TEST(ValidateConv, GroupsMustDivideBothChannelCounts) {
  Case c = conv_case();
  c.input.channels = 8;
  conv(c).groups = 3;  // divides out_channels 6, not 8
  expect_error(c, StatusCode::kInvalidArgument, {"conv.groups", "3 does not divide input.channels 8"});
  conv(c).groups = 4;  // divides 8, not out_channels 6
  expect_error(c, StatusCode::kInvalidArgument, {"conv.groups", "4 does not divide", "out_channels 6"});
  conv(c).groups = 3;  // conv_bias_relu names its own field
  c.op = ConvBiasReluParams{conv(c)};
  expect_error(c, StatusCode::kInvalidArgument, {"conv_bias_relu.groups", "does not divide"});
}

TEST(ValidateConv, EmptyOutputWhenKernelExceedsPaddedInput) {
  Case c = conv_case();
  c.input.spatial = {8, 4};
  conv(c).kernel = {3, 7};  // W: 4 + 1 + 1 = 6 < 7
  expect_error(c, StatusCode::kInvalidArgument, {"conv", "empty output", "spatial dim 1", "extent 7"});
  conv(c).kernel = {3, 6};  // padded 6 == extent 6: one output
  expect_ok(c);
  conv(c).kernel = {3, 3};
  conv(c).dilation = {1, 3};  // extent 3*2+1 = 7 > 6
  expect_error(c, StatusCode::kInvalidArgument, {"empty output", "extent 7"});
}

TEST(ValidateConv, ReflectPaddingMustBeSmallerThanInput) {
  Case c = conv_case();
  c.input.spatial = {8, 4};
  conv(c).padding_mode = PaddingMode::kReflect;
  conv(c).padding.pairs = {{1, 1}, {3, 3}};  // pad = in - 1: reflection without the edge fits
  expect_ok(c);
  conv(c).padding.pairs = {{1, 1}, {0, 4}};  // pad = in: would need the edge repeated
  expect_error(c, StatusCode::kInvalidArgument, {"conv.padding", "dim 1", "reflect", "smaller than the input extent"});
  conv(c).padding.pairs = {{8, 0}, {1, 1}};
  expect_error(c, StatusCode::kInvalidArgument, {"conv.padding", "dim 0", "reflect"});
}

TEST(ValidateConv, CircularPaddingMustNotExceedInput) {
  Case c = conv_case();
  c.input.spatial = {8, 4};
  conv(c).padding_mode = PaddingMode::kCircular;
  conv(c).padding.pairs = {{1, 1}, {4, 4}};  // pad = in: one full wrap is allowed
  expect_ok(c);
  conv(c).padding.pairs = {{1, 1}, {5, 0}};
  expect_error(c, StatusCode::kInvalidArgument, {"conv.padding", "dim 1", "circular", "must not exceed"});
  // Zeros and replicate padding have no such limit.
  conv(c).padding_mode = PaddingMode::kReplicate;
  conv(c).padding.pairs = {{9, 9}, {5, 5}};
  expect_ok(c);
}

TEST(ValidatePool, PaddingAtMostHalfTheWindowExtent) {
  Case c = pool_case();  // extent 3: at most 1
  pool(c).padding.pairs = {{1, 1}, {2, 1}};
  expect_error(c, StatusCode::kInvalidArgument, {"maxpool.padding", "dim 1", "more than half the window extent 3"});
  pool(c).kernel = {3, 4};  // extent 4: 2 is exactly half
  pool(c).padding.pairs = {{1, 1}, {2, 2}};
  expect_ok(c);
  pool(c).dilation = {1, 2};  // k 2, d 2: extent 3, half 1
  pool(c).kernel = {3, 2};
  expect_error(c, StatusCode::kInvalidArgument, {"maxpool.padding", "extent 3"});
}

TEST(ValidatePool, DilatedWindowTouchingNoInputIsRefused) {
  // in 1, k 2, d 3 (extent 4), pad 2/2 (exactly half: allowed by that rule), s 1:
  // padded 5, two windows; window 0 reads padded 0 and 3 = input -2 and 1, both padding.
  Case c = pool_case();
  c.input.spatial = {1};
  pool(c).kernel = {2};
  pool(c).stride = {1};
  pool(c).dilation = {3};
  pool(c).padding.pairs = {{2, 2}};
  expect_error(c, StatusCode::kInvalidArgument, {"maxpool", "window 0", "covers no input"});
  // pad 1/1: padded 3 < extent 4: empty output instead.
  pool(c).padding.pairs = {{1, 1}};
  expect_error(c, StatusCode::kInvalidArgument, {"maxpool", "empty output"});
  // in 2, pad 1/1: padded 4, one window reading input -1 and 2: touches nothing.
  c.input.spatial = {2};
  expect_error(c, StatusCode::kInvalidArgument, {"covers no input"});
  c.input.spatial = {3};  // padded 5, windows at input -1|2 and 0|3: both touch
  expect_ok(c);
}

TEST(ValidateFields, NonPositiveSizesNameTheField) {
  struct Row {
    const char* field;
    void (*edit)(Case&);
  };
  const Row rows[] = {
      {"input.batch", [](Case& c) { c.input.batch = 0; }},
      {"input.batch", [](Case& c) { c.input.batch = -3; }},
      {"input.channels", [](Case& c) { c.input.channels = 0; }},
      {"input.spatial[1]", [](Case& c) { c.input.spatial[1] = 0; }},
      {"input.spatial[0]", [](Case& c) { c.input.spatial[0] = -1; }},
      {"conv.out_channels", [](Case& c) { conv(c).out_channels = 0; }},
      {"conv.kernel[1]", [](Case& c) { conv(c).kernel = {3, 0}; }},
      {"conv.stride[0]", [](Case& c) { conv(c).stride = {0, 1}; }},
      {"conv.dilation[1]", [](Case& c) { conv(c).dilation = {1, -2}; }},
      {"conv.groups", [](Case& c) { conv(c).groups = 0; }},
      {"maxpool.kernel[0]", [](Case& c) { c = pool_case(); pool(c).kernel = {0, 3}; }},
      {"maxpool.stride[1]", [](Case& c) { c = pool_case(); pool(c).stride = {2, 0}; }},
  };
  for (const Row& r : rows) {
    Case c = conv_case();
    r.edit(c);
    SCOPED_TRACE(r.field);
    expect_error(c, StatusCode::kInvalidArgument, {r.field, "must be at least 1"});
  }
}

TEST(ValidateFields, NegativePaddingNamesTheSide) {
  Case c = conv_case();
  conv(c).padding.pairs = {{1, 1}, {1, -1}};
  expect_error(c, StatusCode::kInvalidArgument, {"conv.padding[1][1]", "negative"});
  Case p = pool_case();
  pool(p).padding.pairs = {{-1, 0}, {0, 0}};
  expect_error(p, StatusCode::kInvalidArgument, {"maxpool.padding[0][0]", "negative"});
}

TEST(ValidateFields, RankOutsideOneToThree) {
  Case c = conv_case();
  c.input.spatial = {};
  expect_error(c, StatusCode::kInvalidArgument, {"input.spatial", "rank 0", "1 to 3"});
  c.input.spatial = {2, 3, 4, 5};
  expect_error(c, StatusCode::kInvalidArgument, {"input.spatial", "rank 4", "1 to 3"});
}

TEST(ValidateFields, PerDimListsMustMatchRank) {
  const std::pair<const char*, void (*)(Case&)> rows[] = {
      {"conv.kernel: has 1 entries", [](Case& c) { conv(c).kernel = {3}; }},
      {"conv.kernel: has 0 entries", [](Case& c) { conv(c).kernel = {}; }},
      {"conv.stride: has 3 entries", [](Case& c) { conv(c).stride = {1, 1, 1}; }},
      {"conv.padding: has 1 entries", [](Case& c) { conv(c).padding.pairs = {{1, 1}}; }},
      {"maxpool.dilation: has 1 entries", [](Case& c) { c = pool_case(); pool(c).dilation = {1}; }},
  };
  for (const auto& [want, edit] : rows) {
    Case c = conv_case();
    edit(c);
    expect_error(c, StatusCode::kInvalidArgument, {want, "input.spatial has rank 2"});
  }
}

// Sizes that would need terabytes are refused from the arithmetic alone: the test
// finishes in well under a second, which it could not if anything were allocated.
TEST(ValidateResources, AbsurdSizesRefusedBeforeAllocation) {
  const auto start = std::chrono::steady_clock::now();
  g_largest_alloc = 0;
  Case big_batch = conv_case();
  big_batch.input.batch = 1'000'000'000;
  expect_error(big_batch, StatusCode::kResourceExhausted, {"MiB", "KC_MAX_CASE_BYTES"});
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
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 500) << "validation of absurd sizes took " << ms << " ms";
  EXPECT_LT(g_largest_alloc.load(), size_t{1} << 16) << "a large buffer was allocated";
  ::operator delete(::operator new(size_t{1} << 20));  // the tracker itself works
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
    EXPECT_EQ(s.message(), "KC_MAX_CASE_BYTES: expected a positive byte count with an optional K, M or G suffix "
                           "(e.g. 8G), got '" + std::string(bad) + "'");
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
  EXPECT_EQ(s.message(), "KC_MAX_OP_WORK: expected a positive count with an optional K, M or G suffix (e.g. 8G), "
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

TEST(ValidateTensors, InlineShapesMustMatchTheCase) {
  Case c = conv_case();  // x [2, 4, 8, 8], w [6, 2, 3, 3], y [2, 6, 8, 8]
  c.tensors["x"] = Tensor::zeros(DType::kF32, {2, 4, 8, 8});
  c.tensors["w"] = Tensor::zeros(DType::kF32, {6, 2, 3, 3});
  c.expected["y"] = Tensor::zeros(DType::kF32, {2, 6, 8, 8});
  expect_ok(c);
  c.tensors["w"] = Tensor::zeros(DType::kF32, {6, 4, 3, 3});  // Cin instead of Cin/G
  expect_error(c, StatusCode::kInvalidArgument, {"tensors.w", "[6, 4, 3, 3]", "needs [6, 2, 3, 3]"});
  c.tensors["w"] = Tensor::zeros(DType::kF32, {6, 2, 3, 3});
  c.expected["y"] = Tensor::zeros(DType::kF32, {2, 6, 6, 6});  // as if unpadded
  expect_error(c, StatusCode::kInvalidArgument, {"expected.y", "needs [2, 6, 8, 8]"});
  c.expected.erase("y");
  c.tensors["z"] = Tensor::zeros(DType::kF32, {1});
  expect_error(c, StatusCode::kInvalidArgument, {"tensors.z", "unknown tensor", "conv"});
}

TEST(ValidateTensors, PoolIndicesAndGradientShapes) {
  Case c = pool_case();  // y: (9 + 2 - 3)/2 + 1 = 5 per dim
  c.expected["indices"] = Tensor::zeros(DType::kF64, {1, 2, 5, 5});
  c.expected["dx"] = Tensor::zeros(DType::kF64, {1, 2, 9, 9});
  c.tensors["dy"] = Tensor::zeros(DType::kF64, {1, 2, 5, 5});
  expect_ok(c);
  c.tensors["dy"] = Tensor::zeros(DType::kF64, {1, 2, 4, 4});
  expect_error(c, StatusCode::kInvalidArgument, {"tensors.dy", "needs [1, 2, 5, 5]"});
  c.tensors.erase("dy");
  c.tensors["w"] = Tensor::zeros(DType::kF64, {1});
  expect_error(c, StatusCode::kInvalidArgument, {"tensors.w", "unknown tensor for op maxpool"});
}

// Pool windows that hold no input element, against a brute-force scan of every tap.
bool some_window_misses_input(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    bool touches = false;
    for (int64_t t = 0; t < k; ++t) touches |= o * s + t * d - lo >= 0 && o * s + t * d - lo < in;
    if (!touches) return true;
  }
  return false;
}

RC_GTEST_PROP(ValidateProp, PoolWindowRulesMatchBruteForce, (bool ceil_mode)) {
  const int64_t in = *rc::gen::inRange<int64_t>(1, 12);
  const int64_t k = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t s = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t d = *rc::gen::inRange<int64_t>(1, 6);
  const int64_t half = (d * (k - 1) + 1) / 2;
  const int64_t lo = *rc::gen::inRange<int64_t>(0, half + 1);
  const int64_t hi = *rc::gen::inRange<int64_t>(0, half + 1);
  Case c;
  c.input = {1, 1, {in}};
  c.op = MaxPoolParams{{k}, {s}, {d}, {PadKind::kExplicit, {{lo, hi}}}, ceil_mode};
  const int64_t out = output_extent(in, k, s, d, lo, hi, ceil_mode);
  const Status st = validate(c, Limits{});
  if (out < 1) {
    RC_ASSERT(st.message().find("empty output") != std::string::npos);
  } else if (some_window_misses_input(in, k, s, d, lo, out)) {
    RC_ASSERT(st.message().find("covers no input") != std::string::npos);
  } else {
    RC_ASSERT(st.ok());
  }
}

TEST(ValidatePool, LargeWindowValidatesInLinearTime) {
  // 1-D in 300000, window 300000, pad 150000 (exactly half): 300001 windows, each
  // touching the input. About 24 MB, under the cap. Scanning the taps of every window
  // would take ~10^10 steps; the check must be O(windows).
  Case c;
  c.input = {1, 2, {300'000}};
  c.op = MaxPoolParams{{300'000}, {1}, {}, {PadKind::kExplicit, {{150'000, 150'000}}}};
  Limits limits;
  limits.max_op_work = 1e12;  // 1.8e11 comparisons to run; validating them must stay linear
  const auto start = std::chrono::steady_clock::now();
  expect_ok(c, limits);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 500) << "validation took " << ms << " ms";
}

}  // namespace
}  // namespace kc
