// The conv op's module in kc_core (docs/ops.md, "Convolution"): its geometry (for
// conv_bias_relu too), its field and geometry rules, and the checks that never apply
// to it. conv_bias_relu (ops/conv_bias_relu.cpp) and a stack's layer reuse the field
// rules.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/validate_limits.h"
#include "core/validate_rules.h"
#include "core/zero_region.h"
#include "kc/shape.h"
#include "ops/op_module.h"

namespace kc {

Status check_conv_fields(const std::string& f, const ConvParams& p, const InputSpec& in, const Limits& limits) {
  const size_t rank = in.spatial.size();
  KC_RETURN_IF_ERROR(check_size(f + ".out_channels", p.out_channels, 1, limits));
  KC_RETURN_IF_ERROR(check_dims(f + ".kernel", p.kernel, rank, true, 1, limits));
  KC_RETURN_IF_ERROR(check_dims(f + ".stride", p.stride, rank, false, 1, limits));
  KC_RETURN_IF_ERROR(check_dims(f + ".dilation", p.dilation, rank, false, 1, limits));
  KC_RETURN_IF_ERROR(check_size(f + ".groups", p.groups, 1, limits));
  if (in.channels % p.groups != 0) {
    return invalid_argument(f + ".groups: " + num(p.groups) + " does not divide input.channels " + num(in.channels));
  }
  if (p.out_channels % p.groups != 0) {
    return invalid_argument(f + ".groups: " + num(p.groups) + " does not divide " + f + ".out_channels " +
                            num(p.out_channels));
  }
  return check_padding_fields(f + ".padding", p.padding, rank, limits);
}

namespace {

Status check_conv_geometry(const std::string& f, const ConvGeometry& g) {
  KC_RETURN_IF_ERROR(check_nonempty(f, g.spatial));
  for (size_t i = 0; i < g.spatial.dims.size(); ++i) {
    const DimGeometry& d = g.spatial.dims[i];
    const std::string where = f + ".padding: dim " + num(static_cast<int64_t>(i)) + " pads " + num(d.pad_lo) + "/" +
                              num(d.pad_hi) + " on input extent " + num(d.in);
    if (g.mode == PaddingMode::kReflect && (d.pad_lo >= d.in || d.pad_hi >= d.in)) {
      return invalid_argument(where + ": reflect padding must be smaller than the input extent");
    }
    if (g.mode == PaddingMode::kCircular && (d.pad_lo > d.in || d.pad_hi > d.in)) {
      return invalid_argument(where + ": circular padding must not exceed the input extent");
    }
  }
  return ok_status();
}

int64_t longest_conv_sum(const ConvGeometry& g) {
  const int64_t taps = g.spatial.kernel_count();
  return std::max({g.in_per_group() * taps + 1, g.out_per_group() * taps, g.batch * g.spatial.out_count()});
}

}  // namespace

// Fields named after the case's op: "conv" or "conv_bias_relu".
Status validate_op(const Case& c, const ConvParams& p, const Limits& limits) {
  const std::string f(op_name(c.op));
  KC_RETURN_IF_ERROR(check_conv_fields(f, p, c.input, limits));
  KC_RETURN_IF_ERROR(check_memory(c, limits));
  KC_RETURN_IF_ERROR(check_work(c, limits));
  const ConvGeometry g = unchecked_conv_geometry(c);
  KC_RETURN_IF_ERROR(check_conv_geometry(f, g));
  KC_RETURN_IF_ERROR(check_accumulation(c, longest_conv_sum(g)));
  if (!g.bias && (c.tensors.count("b") || c.expected.count("db"))) {
    return invalid_argument(std::string(c.tensors.count("b") ? "tensors.b" : "expected.db") +
                            ": the case has no bias (" + f + ".bias: false)");
  }
  KC_RETURN_IF_ERROR(check_tensor_shapes(
      c, {{"x", g.x_shape()}, {"w", g.w_shape()}, {"b", g.b_shape()}, {"dy", g.y_shape()}}, "tensors"));
  KC_RETURN_IF_ERROR(check_tensor_shapes(
      c, {{"y", g.y_shape()}, {"dx", g.x_shape()}, {"dw", g.w_shape()}, {"db", g.b_shape()}}, "expected"));
  KC_RETURN_IF_ERROR(check_zero_regions(c.data.zero, {g.x_shape(), g.w_shape(), g.y_shape()}, op_name(c.op)));
  return check_exact_tolerance(c, g.bias ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"x", "w"},
                               nullptr);
}

// Builds geometry without validating; only for a case that validate() accepted, or
// from validate() itself after the field rules passed.
ConvGeometry unchecked_conv_geometry(const Case& c) {
  const auto* fused = std::get_if<ConvBiasReluParams>(&c.op);
  const ConvParams& p = fused ? fused->conv : std::get<ConvParams>(c.op);
  const size_t rank = c.input.spatial.size();
  ConvGeometry g;
  g.batch = c.input.batch;
  g.in_channels = c.input.channels;
  g.out_channels = p.out_channels;
  g.groups = p.groups;
  g.mode = p.padding_mode;
  g.bias = p.bias || fused != nullptr;  // conv_bias_relu always has one
  g.spatial =
      build_spatial(c.input.spatial, p.kernel, or_ones(p.stride, rank), or_ones(p.dilation, rank), p.padding, false);
  return g;
}

StatusOr<ConvGeometry> conv_geometry(const Case& c) {
  if (!std::holds_alternative<ConvParams>(c.op) && !std::holds_alternative<ConvBiasReluParams>(c.op)) {
    return invalid_argument("op: expected a conv or conv_bias_relu case, got " + std::string(op_name(c.op)));
  }
  KC_RETURN_IF_ERROR(validate(c));
  return unchecked_conv_geometry(c);
}

OpCost op_cost(const ConvGeometry& g, DType dtype, BenchOp op) {
  const double es = storage_bytes(dtype);
  const double x = elements(g.x_shape()), w = elements(g.w_shape()), y = elements(g.y_shape());
  const double b = g.bias ? elements(g.b_shape()) : 0.0;
  const double macs = static_cast<double>(g.batch) * g.out_channels * g.spatial.out_count() * g.reduction_length();
  switch (op) {
    case BenchOp::kConvForward:
      return {2 * macs, (x + w + b + y) * es};
    case BenchOp::kConvBackwardData:
      return {2 * macs, (y + w + x) * es};
    case BenchOp::kConvBackwardWeight:
      return {2 * macs, (x + y + w) * es};
    case BenchOp::kConvBackwardBias:
      return {y, (y + b) * es};
    case BenchOp::kConvBackward:  // dy, x, w (b) read; dx, dw (db) written
      return {4 * macs + (g.bias ? y : 0.0), (y + x + w + b + x + w + b) * es};
    default:
      return {};
  }
}

OpTraits op_traits(const ConvParams&) { return {}; }

InputShapes input_shapes(const Case& c, const ConvParams&) {
  const ConvGeometry g = unchecked_conv_geometry(c);  // the fused op's conv too
  InputShapes s{g.x_shape(), g.y_shape(), g.w_shape(), std::nullopt};
  if (g.bias) s.b = g.b_shape();
  return s;
}

std::string never_applies(const Case&, const ConvParams&, std::string_view check) {
  return check == "argmax" ? std::string(kArgmaxOnlyMaxPool) : "";
}

// Reference and candidate hold x, dx, w, dw, y, dy; the reference also its padded x and
// gradient and its im2col workspace.
std::vector<MemoryPart> memory_parts(const Case& c, const ConvParams& p, const std::string& f, const Cause& input) {
  const ConvGeometry g = unchecked_conv_geometry(c);
  const SpatialGeometry& s = g.spatial;
  Dims padded;
  for (const DimGeometry& d : s.dims) padded.push_back(d.padded());
  const int64_t taps = product(s.kernel_dims()), cin = g.in_per_group(), in = product(s.in_dims());
  const double grown = ratio(product(s.out_dims()), in);  // outputs over inputs: the padding's doing
  const Cause kernel{static_cast<double>(taps), f + ".kernel", f + ".kernel " + dims_text(s.kernel_dims())};
  const Cause cout{static_cast<double>(g.out_channels), f + ".out_channels",
                   f + ".out_channels " + num(g.out_channels)};
  const Cause channels{static_cast<double>(cin), "input.channels",
                       "input.channels " + num(g.in_channels) + " (in groups of " + num(cin) + ")"};
  const Cause more_channels{ratio(g.out_channels, g.in_channels), cout.field, cout.why};
  // w is not made of x: its largest factor is its cause.
  const Cause w_base = kernel.factor >= cout.factor && kernel.factor >= channels.factor ? kernel
                       : cout.factor >= channels.factor                                 ? cout
                                                                                        : channels;
  // Reference and candidate: x, dx, w, dw, y, dy; reference only: xp, dxp, im2col.
  return {{"x and dx", g.x_shape(), 4, input, {}},
          {"w and dw", g.w_shape(), 4, w_base, {}},
          {"y and dy", g.y_shape(), 4, input, {more_channels, padding_cause(f, p.padding, s, grown)}},
          {"the reference's padded x and its gradient",
           concat({g.batch, g.in_channels}, padded),
           2,
           input,
           {padding_cause(f, p.padding, s, ratio(product(padded), in))}},
          {"the reference's im2col workspace (Cin/G, kernel, out)",
           concat(concat({cin}, s.kernel_dims()), s.out_dims()),
           1,
           input,
           {kernel, padding_cause(f, p.padding, s, grown)}}};
}

// Multiply-adds.
OpWork op_work(const Case& c, const ConvParams&) {
  const ConvGeometry g = unchecked_conv_geometry(c);
  return {static_cast<double>(g.batch) * static_cast<double>(g.out_channels) * static_cast<double>(g.in_per_group()) *
              window_work(g.spatial),
          " multiply-adds"};
}

const PadSpec& op_padding(const ConvParams& p) { return p.padding; }

StatusOr<OpGeometry> geometry_of(const Case& c, const ConvParams&) {
  KC_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(c));
  return OpGeometry{g};
}

void drop_padding(ConvParams& p) {
  p.padding = PadSpec{PadKind::kValid, {}};
  p.padding_mode = PaddingMode::kZeros;
}

}  // namespace kc
