// Small cases for the GPU backend tests: every op, mode and storage dtype the cuda
// backend claims, each cheap enough to check fully (gradcheck included) in seconds.
#pragma once

#include <string>
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
  return r;
}

}  // namespace kc::gpu_test
