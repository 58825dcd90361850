// Case rules an invalid case can break (validate() enforces them; docs/ops.md
// and docs/cases.md). Each edit breaks its one rule and keeps every other: where the rule needs
// room (reflect padding wider than the input, a pool window over padding only), the
// other dims are widened so that they stay valid, and the padding is first written
// out as the explicit pairs it resolves to, which leaves the geometry unchanged.
// The base case has no inline data (a changed shape would break a second rule).
// More on the method: docs/notes.md, section harness/src/gen/invalid_rules.cpp.
#include <algorithm>

#include "core/format.h"
#include "gen/op_fields.h"
#include "invalid.h"
#include "kc/shape.h"
#include "ops/op_module.h"
#include "stack/stack.h"

namespace kc::gen::detail {
namespace {

std::string at(size_t i) { return "[" + std::to_string(i) + "]"; }

// Conv rules are listed for conv, conv_bias_relu and stacks only.
ConvParams& conv(Case& c) { return *conv_of(c); }

// The prefix of a geometry refusal: the op's field, or for a stack its first layer as
// the single-op case it runs as (a layer with relu runs as conv_bias_relu).
std::string geometry_field(const Case& c) {
  if (const auto* p = std::get_if<StackParams>(&c.op)) {
    return "stack layer 1: " + std::string(p->relu ? ConvBiasReluParams::kName : ConvParams::kName);
  }
  return op_field(c);
}

}  // namespace

// Strides, dilations and padding written out in full, with the same geometry.
WindowRef make_explicit(Case& c) {
  WindowRef w = window_of(c);
  const size_t rank = c.input.spatial.size();
  if (w.stride.empty()) w.stride = w.pool ? w.kernel : Dims(rank, 1);
  if (w.dilation && w.dilation->empty()) *w.dilation = Dims(rank, 1);
  const Dims dilation = w.dilation ? *w.dilation : Dims(rank, 1);
  w.padding = PadSpec{PadKind::kExplicit, resolve_padding(w.padding, c.input.spatial, w.kernel, w.stride, dilation)};
  return w;
}

int64_t window_extent(const WindowRef& w, size_t i) {
  return (w.dilation ? (*w.dilation)[i] : 1) * (w.kernel[i] - 1) + 1;
}

namespace {

Breakage batch_zero(Case& c, size_t, int64_t) {
  c.input.batch = 0;
  return {"input.batch: 0 must be at least 1", {}};
}
Breakage batch_negative(Case& c, size_t, int64_t a) {
  c.input.batch = -a;
  return {"input.batch: " + num(-a) + " must be at least 1", {}};
}
Breakage channels_zero(Case& c, size_t, int64_t) {
  c.input.channels = 0;
  return {"input.channels: 0 must be at least 1", {}};
}
Breakage spatial_zero(Case& c, size_t dim, int64_t) {
  c.input.spatial[dim] = 0;
  return {"input.spatial" + at(dim) + ": 0 must be at least 1", {}};
}
Breakage spatial_over_limit(Case& c, size_t dim, int64_t a) {
  c.input.spatial[dim] = (int64_t{1} << 31) + a;
  return {"input.spatial" + at(dim) + ": " + num(c.input.spatial[dim]) + " exceeds the size limit", {}};
}
Breakage memory_cap(Case& c, size_t, int64_t a) {
  c.input.batch = (int64_t{1} << 30) + a;  // every field is within the size limit
  return {"over the cap of", {}};
}
Breakage rank_four(Case& c, size_t, int64_t a) {
  WindowRef w = make_explicit(c);
  while (c.input.spatial.size() < 4) {  // one more dim in every per-dim list
    c.input.spatial.insert(c.input.spatial.begin(), 1 + a);
    w.kernel.insert(w.kernel.begin(), 1);
    w.stride.insert(w.stride.begin(), 1);
    if (w.dilation) w.dilation->insert(w.dilation->begin(), 1);
    w.padding.pairs.insert(w.padding.pairs.begin(), {0, 0});
  }
  return {"input.spatial: rank 4 is outside 1 to 3", {}};
}
Breakage rank_zero(Case& c, size_t, int64_t) {
  WindowRef w = make_explicit(c);
  c.input.spatial.clear();
  w.kernel.clear();
  w.stride.clear();
  if (w.dilation) w.dilation->clear();
  w.padding.pairs.clear();
  return {"input.spatial: rank 0 is outside 1 to 3", {}};
}
Breakage kernel_zero(Case& c, size_t dim, int64_t) {
  window_of(c).kernel[dim] = 0;
  return {op_field(c) + ".kernel" + at(dim) + ": 0 must be at least 1", {}};
}
Breakage kernel_rank(Case& c, size_t, int64_t a) {
  window_of(c).kernel.push_back(a);
  const size_t rank = c.input.spatial.size();
  return {op_field(c) + ".kernel: has " + num(static_cast<int64_t>(rank + 1)) + " entries but input.spatial has rank " +
              num(static_cast<int64_t>(rank)),
          {}};
}
Breakage stride_zero(Case& c, size_t dim, int64_t) {
  make_explicit(c).stride[dim] = 0;
  return {op_field(c) + ".stride" + at(dim) + ": 0 must be at least 1", {}};
}
Breakage dilation_zero(Case& c, size_t dim, int64_t) {
  (*make_explicit(c).dilation)[dim] = 0;  // listed only for ops with a dilation
  return {op_field(c) + ".dilation" + at(dim) + ": 0 must be at least 1", {}};
}
Breakage padding_negative(Case& c, size_t dim, int64_t a) {
  make_explicit(c).padding.pairs[dim][1] = -a;
  return {op_field(c) + ".padding" + at(dim) + "[1]: " + num(-a) + " is negative", {}};
}
Breakage padding_rank(Case& c, size_t, int64_t) {
  make_explicit(c).padding.pairs.push_back({0, 0});
  const size_t rank = c.input.spatial.size();
  return {op_field(c) + ".padding: has " + num(static_cast<int64_t>(rank + 1)) +
              " entries but input.spatial has rank " + num(static_cast<int64_t>(rank)),
          {}};
}
// A kernel wider than the padded input by more than a stride: empty even in ceil_mode.
Breakage empty_output(Case& c, size_t dim, int64_t a) {
  WindowRef w = make_explicit(c);
  const auto [lo, hi] = w.padding.pairs[dim];
  w.kernel[dim] = c.input.spatial[dim] + lo + hi + w.stride[dim] + a;
  if (w.dilation) (*w.dilation)[dim] = 1;
  return {geometry_field(c) + ": empty output in spatial dim " + std::to_string(dim), {}};
}

Breakage out_channels_zero(Case& c, size_t, int64_t) {
  conv(c).out_channels = 0;
  return {op_field(c) + ".out_channels: 0 must be at least 1", {}};
}
Breakage groups_zero(Case& c, size_t, int64_t) {
  conv(c).groups = 0;
  return {op_field(c) + ".groups: 0 must be at least 1", {}};
}
// groups G >= 2 with channels (or out_channels) one to G-1 past a multiple of G.
Breakage groups_split(Case& c, int64_t a, bool in) {
  ConvParams& p = conv(c);
  const int64_t g = std::max<int64_t>(2, p.groups), off = 1 + (a - 1) % (g - 1);
  const int64_t cin = c.input.channels / p.groups, cout = p.out_channels / p.groups;
  p.groups = g;
  c.input.channels = g * cin + (in ? off : 0);
  p.out_channels = g * cout + (in ? 0 : off);
  return {op_field(c) + ".groups: " + num(g) + " does not divide " +
              (in ? "input.channels " + num(c.input.channels) : op_field(c) + ".out_channels " + num(p.out_channels)),
          {}};
}
Breakage groups_channels(Case& c, size_t, int64_t a) { return groups_split(c, a, true); }
Breakage groups_out(Case& c, size_t, int64_t a) { return groups_split(c, a, false); }

// Padding of dim `dim` too wide for a reflect (circular) mode; every other side and
// dim keeps within the mode's limit, widening the input where it must.
Breakage pad_too_wide(Case& c, size_t dim, int64_t a, PaddingMode mode) {
  WindowRef w = make_explicit(c);
  conv(c).padding_mode = mode;
  const int64_t margin = mode == PaddingMode::kReflect ? 1 : 0;
  for (size_t i = 0; i < c.input.spatial.size(); ++i) {
    const auto [lo, hi] = w.padding.pairs[i];
    int64_t& in = c.input.spatial[i];
    in = std::max({in, window_extent(w, i), (i == dim ? 0 : lo + margin), hi + margin});
  }
  w.padding.pairs[dim][0] = c.input.spatial[dim] + a - margin;
  const std::string rule = mode == PaddingMode::kReflect ? "reflect padding must be smaller than the input extent"
                                                         : "circular padding must not exceed the input extent";
  return {geometry_field(c) + ".padding: dim " + std::to_string(dim) + " pads " + num(w.padding.pairs[dim][0]) + "/" +
              num(w.padding.pairs[dim][1]) + " on input extent " + num(c.input.spatial[dim]) + ": " + rule,
          {}};
}
Breakage reflect_too_wide(Case& c, size_t dim, int64_t a) { return pad_too_wide(c, dim, a, PaddingMode::kReflect); }
Breakage circular_too_wide(Case& c, size_t dim, int64_t a) { return pad_too_wide(c, dim, a, PaddingMode::kCircular); }

}  // namespace

Breakage bias_tensor(Case& c, size_t, int64_t) {
  conv(c).bias = false;
  c.tensors["b"] = Tensor::zeros(c.dtype, {conv(c).out_channels});
  return {"tensors.b: the case has no bias", {}};
}

namespace {

Dims x_shape(const Case& c) {
  Dims s = {c.input.batch, c.input.channels};
  s.insert(s.end(), c.input.spatial.begin(), c.input.spatial.end());
  return s;
}
Breakage x_shape_mismatch(Case& c, size_t, int64_t a) {
  Dims s = x_shape(c);
  s[0] += a;
  c.tensors["x"] = Tensor::zeros(c.dtype, s);
  return {"tensors.x: shape " + dims_to_string(s) + " does not match the case", {}};
}
}  // namespace

Breakage pool_weights(Case& c, size_t, int64_t a) {
  c.tensors["w"] = Tensor::zeros(c.dtype, {a});
  return {"tensors.w: unknown tensor for op " + op_field(c), {}};
}

namespace {

Breakage expected_y_shape(Case& c, size_t, int64_t a) {
  c.expected["y"] = Tensor::zeros(DType::kF64, {a});
  return {"expected.y: shape [" + num(a) + "] does not match the case", {}};
}

StackParams& stack(Case& c) { return std::get<StackParams>(c.op); }

Breakage stack_depth_zero(Case& c, size_t, int64_t) {
  stack(c).depth = 0;
  return {"stack.depth: 0 is outside 1 to " + num(kMaxStackDepth), {}};
}
Breakage stack_depth_negative(Case& c, size_t, int64_t a) {
  stack(c).depth = -a;
  return {"stack.depth: " + num(-a) + " is outside 1 to " + num(kMaxStackDepth), {}};
}
Breakage stack_too_deep(Case& c, size_t, int64_t a) {
  stack(c).depth = kMaxStackDepth + a;
  return {"stack.depth: " + num(kMaxStackDepth + a) + " is outside 1 to " + num(kMaxStackDepth), {}};
}
// A stack that erodes to nothing past its first layer: dim `dim` loses one element a
// layer (kernel 2, valid), every other dim keeps its extent (kernel 1) and there is no
// pool, so an input of m runs m - 1 layers and layer m has an empty output.
Breakage stack_erodes(Case& c, size_t dim, int64_t a) {
  StackParams& p = stack(c);
  const size_t rank = c.input.spatial.size();
  p.conv.kernel = Dims(rank, 1);
  p.conv.kernel[dim] = 2;
  p.conv.stride = Dims(rank, 1);
  p.conv.dilation = Dims(rank, 1);
  p.conv.padding = PadSpec{PadKind::kValid, {}};
  p.pool.reset();
  c.input.spatial[dim] += a;
  const int64_t m = c.input.spatial[dim];
  p.depth = m + a - 1;
  return {"stack layer " + num(m) + ": " + std::string(p.relu ? ConvBiasReluParams::kName : ConvParams::kName) +
              ": empty output in spatial dim " + std::to_string(dim),
          {}};
}
// The first layer's max pool padded past half its window (its conv is left valid).
Breakage stack_pool_pad_over_half(Case& c, size_t dim, int64_t a) {
  MaxPoolParams& p = *stack(c).pool;
  const int64_t half = p.kernel[dim] / 2;  // a stack's pool has no dilation
  p.padding.pairs[dim][static_cast<size_t>(a % 2)] = half + a;
  const auto [lo, hi] = p.padding.pairs[dim];
  return {"stack layer 1: maxpool.padding: dim " + std::to_string(dim) + " pads " + num(lo) + "/" + num(hi) +
              ", more than half the window extent " + num(p.kernel[dim]),
          {}};
}
Breakage stack_inline_x(Case& c, size_t, int64_t) {
  c.tensors["x"] = Tensor::zeros(c.dtype, x_shape(c));
  return {"tensors: inline tensors are not supported for op stack", {}};
}
Breakage stack_inline_expected(Case& c, size_t, int64_t a) {
  c.expected["y"] = Tensor::zeros(DType::kF64, {a});
  return {"expected: inline tensors are not supported for op stack", {}};
}

// A conv's sums round in an order of the kernel's own: exact holds only with the
// integer fill (the base case has no inline data).
Breakage exact_random_fill(Case& c, size_t, int64_t a) {
  c.tolerance.kind = ToleranceKind::kExact;
  c.data.fill = a % 2 ? Fill::kNormal : Fill::kRandom;
  return {"tolerance: exact with fill: " + std::string(fill_name(c.data.fill)), {}};
}

}  // namespace

std::vector<Rule> stack_rules(const StackParams& p) {
  std::vector<Rule> r = {
      {"stack_depth_zero", stack_depth_zero}, {"stack_depth_negative", stack_depth_negative},
      {"stack_too_deep", stack_too_deep},     {"stack_erodes", stack_erodes},
      {"stack_inline_x", stack_inline_x},     {"stack_inline_expected", stack_inline_expected},
  };
  if (p.pool) r.push_back({"stack_pool_pad_over_half", stack_pool_pad_over_half});
  return r;
}

std::vector<Rule> conv_rules() {
  return {{"exact_random_fill", exact_random_fill},
          {"out_channels_zero", out_channels_zero},
          {"groups_zero", groups_zero},
          {"groups_channels", groups_channels},
          {"groups_out", groups_out},
          {"reflect_too_wide", reflect_too_wide},
          {"circular_too_wide", circular_too_wide}};
}

std::vector<Rule> single_op_rules() {
  return {{"x_shape_mismatch", x_shape_mismatch}, {"expected_y_shape", expected_y_shape}};
}

std::string op_field(const Case& c) { return is_stack(c) ? "stack.layer.conv" : std::string(op_name(c.op)); }

std::vector<Rule> case_rules(const Case& c) {
  std::vector<Rule> r = {
      {"batch_zero", batch_zero},
      {"batch_negative", batch_negative},
      {"channels_zero", channels_zero},
      {"spatial_zero", spatial_zero},
      {"spatial_over_limit", spatial_over_limit},
      {"memory_cap", memory_cap},
      {"rank_four", rank_four},
      {"rank_zero", rank_zero},
      {"kernel_zero", kernel_zero},
      {"kernel_rank", kernel_rank},
      {"stride_zero", stride_zero},
      {"dilation_zero", dilation_zero},
      {"padding_negative", padding_negative},
      {"padding_rank", padding_rank},
      {"empty_output", empty_output},
  };
  if (Case copy = c; window_of(copy).dilation == nullptr) {  // an op without a dilation (average pooling)
    r.erase(std::find_if(r.begin(), r.end(), [](const Rule& x) { return x.apply == dilation_zero; }));
  }
  const std::vector<Rule> own = std::visit([&](const auto& p) { return op_rules(c, p); }, c.op);
  r.insert(r.end(), own.begin(), own.end());
  return r;
}

}  // namespace kc::gen::detail
