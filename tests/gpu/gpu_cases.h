// Small cases for the GPU backend tests: every op, mode and storage dtype the cuda
// backend claims, each cheap enough to check fully (gradcheck included) in seconds.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kc/case.h"
#include "support/case_builders.h"

namespace kc::gpu_test {

inline Case named(Case c, std::string name, DType dtype, Fill fill = Fill::kRandom, uint64_t seed = 7) {
  c.name = std::move(name);
  c.dtype = dtype;
  c.data = DataSpec{seed, fill};
  return c;
}

inline Case conv(const test::ConvSpec& s, std::string name, DType dtype, Fill fill = Fill::kRandom) {
  return named(test::conv_case(s), std::move(name), dtype, fill);
}

inline Case fused(test::ConvSpec s, std::string name, DType dtype) {
  s.bias = true;
  Case c = test::conv_case(s);
  c.op = ConvBiasReluParams{std::get<ConvParams>(c.op)};
  return named(std::move(c), std::move(name), dtype);
}

inline Case pool(Dims spatial, Dims kernel, Dims stride, PadSpec pad, TieRule tie, PoolMode mode, std::string name,
                 DType dtype, Fill fill) {
  Case c;
  c.input = InputSpec{2, 3, std::move(spatial)};
  MaxPoolParams p;
  p.kernel = std::move(kernel);
  p.stride = std::move(stride);
  p.padding = std::move(pad);
  p.tie = tie;
  p.mode = mode;
  c.op = p;
  return named(std::move(c), std::move(name), dtype, fill);
}

// An average pool on a 2 x 3 input with explicit [lo, hi] pads.
struct AvgSpec {
  Dims spatial, kernel, stride;
  std::vector<std::array<int64_t, 2>> pads;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor;
};

inline Case avgpool(const AvgSpec& s, std::string name, DType dtype, Fill fill = Fill::kRandom) {
  Case c;
  c.input = InputSpec{2, 3, s.spatial};
  AvgPoolParams p;
  p.kernel = s.kernel;
  p.stride = s.stride;
  p.padding = test::explicit_pad(s.pads);
  p.ceil_mode = s.ceil_mode;
  p.count_include_pad = s.count_include_pad;
  p.divisor = s.divisor;
  c.op = p;
  return named(std::move(c), std::move(name), dtype, fill);
}

// Average-pool geometries over ranks 1-3: strides below, at and above the kernel,
// asymmetric pads, ceil_mode with and without a last window past the padding, padding
// counted or not, a given divisor. The comments say what the cudnn peer does with each.
inline std::vector<std::pair<std::string, AvgSpec>> avgpool_specs() {
  return {
      // floor and ceil agree; symmetric: cuDNN's own padding, padding not counted
      {"avgpool1d exclude", {{11}, {4}, {3}, {{1, 1}}, true, false, std::nullopt}},
      // counted asymmetric padding, overlapping windows: cuDNN on x pre-padded with zeros
      {"avgpool2d include asym", {{8, 7}, {3, 2}, {1, 2}, {{2, 1}, {0, 1}}, false, true, std::nullopt}},
      // ceil_mode adds a window past the padding (dim 0): cudnn refuses
      {"avgpool2d ceil include", {{9, 7}, {3, 3}, {2, 2}, {{1, 0}, {1, 1}}, true, true, std::nullopt}},
      // the same, padding not counted: cudnn refuses
      {"avgpool3d ceil exclude",
       {{5, 4, 6}, {3, 2, 2}, {2, 1, 2}, {{1, 0}, {0, 1}, {1, 0}}, true, false, std::nullopt}},
      // a divisor: cudnn refuses
      {"avgpool3d divisor", {{4, 5, 6}, {2, 3, 2}, {2, 1, 2}, {{1, 0}, {1, 1}, {0, 1}}, false, true, 5}},
      // no padding, stride past the kernel (input elements no window reads)
      {"avgpool2d sparse", {{9, 10}, {2, 3}, {3, 4}, {{0, 0}, {0, 0}}, false, true, std::nullopt}},
  };
}

// Convs the CUTLASS engine of `cuda` takes (channels multiples of 8, zero padding, groups
// 1): each 2-D pass and epilogue in the small tile in bf16, f16 and f32, one layer large
// enough for the large fprop and dgrad tiles (the bench's re-checked layers reach the rest),
// 3-D in bf16 and f32, with the geometries its traps hide in: asymmetric padding (the high
// side only through the output size), dilation (the output size CUTLASS's constructor gets
// wrong), stride 2 over a 1x1 filter (strided dgrad's positions no tap reaches), rank 1.
inline std::vector<Case> cutlass_cases() {
  using test::explicit_pad;
  using test::pad_kind;
  std::vector<Case> r;
  for (DType d : {DType::kBF16, DType::kF16, DType::kF32}) {
    const std::string t(dtype_name(d));
    r.push_back(conv({2, 8, 16, 1, {9, 8}, {3, 3}, {1, 1}, {1, 1}, pad_kind(PadKind::kSame), PaddingMode::kZeros, true},
                     "cutlass conv2d same bias " + t, d));
    r.push_back(fused({2, 16, 8, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1}, explicit_pad({{1, 2}, {0, 1}})},
                      "cutlass fused asym " + t, d));
    r.push_back(conv({2, 8, 8, 1, {9, 9}, {1, 1}, {2, 2}, {1, 1}, explicit_pad({{0, 0}, {0, 0}})},
                     "cutlass strided 1x1 " + t, d));
    r.push_back(
        conv({1, 8, 8, 1, {10, 9}, {3, 3}, {1, 1}, {2, 2}, explicit_pad({{2, 2}, {2, 1}})}, "cutlass dilated " + t, d));
  }
  r.push_back(conv({2, 8, 8, 1, {12}, {5}, {2}, {1}, explicit_pad({{2, 1}}), PaddingMode::kZeros, true},
                   "cutlass conv1d strided f16", DType::kF16));
  r.push_back(conv({1, 8, 16, 1, {5, 4, 6}, {3, 2, 3}, {2, 1, 2}, {1, 1, 1}, explicit_pad({{1, 1}, {1, 0}, {0, 1}})},
                   "cutlass conv3d strided bf16", DType::kBF16));
  r.push_back(fused({1, 8, 8, 1, {4, 5, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, pad_kind(PadKind::kSame)},
                    "cutlass fused3d f32", DType::kF32));
  // 4 x 66 x 66 = 17424 outputs: 137 blocks of 128, past 132 multiprocessors.
  r.push_back(conv({4, 16, 16, 1, {66, 66}, {3, 3}, {1, 1}, {1, 1}, pad_kind(PadKind::kSame)},
                   "cutlass large tile bf16", DType::kBF16));
  return r;
}

inline std::vector<Case> cuda_cases() {
  using test::explicit_pad;
  using test::pad_kind;
  std::vector<Case> r;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    const std::string t(dtype_name(d));
    r.push_back(conv({2, 3, 4, 1, {9, 8}, {3, 3}, {1, 1}, {1, 1}, pad_kind(PadKind::kSame), PaddingMode::kZeros, true},
                     "conv2d same bias " + t, d));
    r.push_back(
        fused({2, 4, 4, 2, {7, 6}, {3, 2}, {2, 1}, {1, 2}, explicit_pad({{1, 2}, {0, 1}})}, "fused groups " + t, d));
    r.push_back(pool({9, 7}, {3, 3}, {2, 2}, explicit_pad({{1, 1}, {1, 0}}), TieRule::kFirst, PoolMode::kTraining,
                     "maxpool ties " + t, d, Fill::kTies));
  }
  r.push_back(
      conv({1, 4, 8, 4, {6, 5}, {3, 3}, {1, 1}, {1, 1}, pad_kind(PadKind::kSame)}, "depthwise f32", DType::kF32));
  r.push_back(conv({2, 2, 3, 1, {11}, {4}, {3}, {1}, explicit_pad({{2, 0}}), PaddingMode::kZeros, true}, "conv1d f32",
                   DType::kF32));
  r.push_back(conv({1, 2, 2, 1, {4, 5, 4}, {2, 3, 2}, {1, 2, 1}, {2, 1, 1}, explicit_pad({{1, 1}, {1, 0}, {0, 1}})},
                   "conv3d f32", DType::kF32));
  for (PaddingMode m : {PaddingMode::kReflect, PaddingMode::kReplicate, PaddingMode::kCircular}) {
    test::ConvSpec s{2, 2, 3, 1, {6, 5}, {3, 3}, {1, 2}, {1, 1}, explicit_pad({{2, 1}, {1, 2}})};
    s.mode = m;
    r.push_back(conv(s, "conv " + std::string(padding_mode_name(m)) + " f32", DType::kF32));
  }
  Case exact = conv({2, 3, 4, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, pad_kind(PadKind::kSame), PaddingMode::kZeros, true},
                    "conv exact f16", DType::kF16, Fill::kInteger);
  exact.tolerance.kind = ToleranceKind::kExact;
  exact.deterministic = true;
  r.push_back(exact);
  r.push_back(pool({8, 8}, {2, 2}, {2, 2}, explicit_pad({{0, 0}, {0, 0}}), TieRule::kLast, PoolMode::kTraining,
                   "maxpool special last f32", DType::kF32, Fill::kSpecial));
  r.push_back(pool({10}, {3}, {1}, explicit_pad({{1, 1}}), TieRule::kAny, PoolMode::kInference, "maxpool inference f32",
                   DType::kF32, Fill::kRandom));
  const std::vector<std::pair<std::string, AvgSpec>> avg = avgpool_specs();
  for (size_t i = 0; i < avg.size(); ++i) {  // one dtype each, in turn
    const DType d = std::array<DType, 3>{DType::kF32, DType::kF16, DType::kBF16}[i % 3];
    r.push_back(avgpool(avg[i].second, avg[i].first + " " + std::string(dtype_name(d)), d));
  }
  for (Case& c : cutlass_cases()) r.push_back(std::move(c));
  return r;
}

}  // namespace kc::gpu_test
