// The average pool op's module in kc_core (docs/ops.md, "Average pooling"): its
// geometry, its field and geometry rules (count_include_pad: false refuses a window of
// only padding), where `tolerance: exact` holds on it, and the checks that never apply
// to it.
#include <algorithm>
#include <string>

#include "core/check_table.h"
#include "core/format.h"
#include "core/validate_limits.h"
#include "core/validate_rules.h"
#include "core/zero_region.h"
#include "kc/shape.h"
#include "ops/op_module.h"

namespace kc {
namespace {

// Whether every window of an average pool divides by a power of two (then y = sum /
// divisor is exact wherever the sum is). Per dim the window's divisor factor is its
// clipped extent; the divisor is their product, a power of two exactly when each is.
bool avg_divisors_exact(const AvgPoolGeometry& g) {
  auto power_of_two = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (g.divisor > 0) return power_of_two(g.divisor);
  for (const DimGeometry& d : g.spatial.dims) {
    for (int64_t o = 0; o < d.out; ++o) {
      const int64_t start = o * d.stride - d.pad_lo, end = start + d.kernel;
      const int64_t counted = g.count_include_pad ? std::min(end, d.in + d.pad_hi) - start
                                                  : std::min(end, d.in) - std::max<int64_t>(start, 0);
      if (!power_of_two(counted)) return false;
    }
  }
  return true;
}

// `tolerance: exact` beyond the rules of every op: an average pool's y divides, and its
// dx adds dy / divisor over the windows holding an element.
Status check_avg_exact(const Case& c, const AvgPoolGeometry& g) {
  if (c.tolerance.kind != ToleranceKind::kExact) return ok_status();
  // In any fill, once two windows share an element, the order of those rounded
  // quotients shows.
  if (judges_backward(c) && windows_sharing(g.spatial) > 1) {
    return invalid_argument(
        "tolerance: exact on this avgpool: its windows overlap, and dx adds the rounded dy / divisor of "
        "several windows in an order a correct kernel chooses; use bound, or a stride no smaller than the "
        "kernel");
  }
  if (!avg_divisors_exact(g)) {
    return invalid_argument(
        "tolerance: exact on this avgpool: some window's divisor is not a power of two, so a correct kernel "
        "rounds y = sum / divisor to its dtype where the oracle keeps the f64 quotient; use bound, or a divisor "
        "that is a power of two");
  }
  return ok_status();
}

}  // namespace

Status validate_op(const Case& c, const AvgPoolParams& p, const Limits& limits) {
  const size_t rank = c.input.spatial.size();
  KC_RETURN_IF_ERROR(check_dims("avgpool.kernel", p.kernel, rank, true, 1, limits));
  KC_RETURN_IF_ERROR(check_dims("avgpool.stride", p.stride, rank, false, 1, limits));
  KC_RETURN_IF_ERROR(check_padding_fields("avgpool.padding", p.padding, rank, limits));
  if (p.divisor && *p.divisor < 1) {  // as the reader says it
    return invalid_argument("avgpool.divisor: " + num(*p.divisor) +
                            " is not a divisor: give a count >= 1, or leave divisor out");
  }
  if (p.divisor) KC_RETURN_IF_ERROR(check_size("avgpool.divisor", *p.divisor, 1, limits));
  KC_RETURN_IF_ERROR(check_memory(c, limits));
  KC_RETURN_IF_ERROR(check_work(c, limits));
  const AvgPoolGeometry g = unchecked_avgpool_geometry(c);
  KC_RETURN_IF_ERROR(check_nonempty(std::string(AvgPoolParams::kName), g.spatial));
  if (!g.count_include_pad) {  // the divisor would be the window's 0 input elements
    for (size_t i = 0; i < g.spatial.dims.size(); ++i) {
      const DimGeometry& d = g.spatial.dims[i];
      for (int64_t o = 0; o < d.out; ++o) {
        const int64_t start = o * d.stride - d.pad_lo;
        if (start + d.kernel > 0 && start < d.in) continue;
        return invalid_argument("avgpool: dim " + num(static_cast<int64_t>(i)) + ": window " + num(o) +
                                " covers no input element (only padding), and count_include_pad: false would "
                                "divide by 0; reduce the padding or count the padding");
      }
    }
  }
  KC_RETURN_IF_ERROR(check_accumulation(c, g.spatial.kernel_count()));
  KC_RETURN_IF_ERROR(check_tensor_shapes(c, {{"x", g.x_shape()}, {"dy", g.y_shape()}}, "tensors"));
  KC_RETURN_IF_ERROR(check_tensor_shapes(c, {{"y", g.y_shape()}, {"dx", g.x_shape()}}, "expected"));
  KC_RETURN_IF_ERROR(check_zero_regions(c.data.zero, {g.x_shape(), {}, g.y_shape()}, AvgPoolParams::kName));
  KC_RETURN_IF_ERROR(check_avg_exact(c, g));
  return check_exact_tolerance(c, {"x"}, nullptr);
}

AvgPoolGeometry unchecked_avgpool_geometry(const Case& c) {
  const AvgPoolParams& p = std::get<AvgPoolParams>(c.op);
  const size_t rank = c.input.spatial.size();
  AvgPoolGeometry g;
  g.batch = c.input.batch;
  g.channels = c.input.channels;
  g.ceil_mode = p.ceil_mode;
  g.count_include_pad = p.count_include_pad;
  g.divisor = p.divisor.value_or(0);
  g.spatial = build_spatial(c.input.spatial, p.kernel, p.stride.empty() ? p.kernel : p.stride, Dims(rank, 1), p.padding,
                            p.ceil_mode);
  return g;
}

StatusOr<AvgPoolGeometry> avgpool_geometry(const Case& c) {
  if (!std::holds_alternative<AvgPoolParams>(c.op)) {
    return invalid_argument(std::string("op: expected an avgpool case, got ") + std::string(op_name(c.op)));
  }
  KC_RETURN_IF_ERROR(validate(c));
  return unchecked_avgpool_geometry(c);
}
// A window sum per output (and one division); the backward adds dy / divisor into each
// of the window's elements.
OpCost op_cost(const AvgPoolGeometry& g, DType dtype, BenchOp op) {
  const double es = storage_bytes(dtype);
  const double x = elements(g.x_shape()), y = elements(g.y_shape());
  const double taps = static_cast<double>(g.spatial.kernel_count());
  switch (op) {
    case BenchOp::kAvgPoolForward:
      return {y * taps, (x + y) * es};
    case BenchOp::kAvgPoolBackward:
      return {y * taps, (y + x) * es};
    default:
      return {};
  }
}

OpTraits op_traits(const AvgPoolParams&) { return {}; }  // a sum of its window, divided

InputShapes input_shapes(const Case& c, const AvgPoolParams&) {
  const AvgPoolGeometry g = unchecked_avgpool_geometry(c);
  return {g.x_shape(), g.y_shape(), std::nullopt, std::nullopt};
}

std::string never_applies(const Case&, const AvgPoolParams&, std::string_view check) {
  if (check == "adjoint") {
    return "the adjoint identity is checked on conv's three products; an average pool's linear map is checked by "
           "gradcheck";
  }
  if (check == "weight_share") return "average pool has no weights, so nothing is shared";
  return check == "argmax" ? std::string(kArgmaxOnlyMaxPool) : "";
}

std::vector<MemoryPart> memory_parts(const Case& c, const AvgPoolParams& p, const std::string& f, const Cause& input) {
  const AvgPoolGeometry g = unchecked_avgpool_geometry(c);
  return pool_parts(g.spatial, g.x_shape(), g.y_shape(), p.padding, f, input, 4);
}

// Additions (and one division per output, not counted).
OpWork op_work(const Case& c, const AvgPoolParams&) {
  const AvgPoolGeometry g = unchecked_avgpool_geometry(c);
  return {static_cast<double>(g.batch) * static_cast<double>(g.channels) * window_work(g.spatial), " additions"};
}

Dims AvgPoolGeometry::x_shape() const {
  Dims d = {batch, channels};
  for (int64_t e : spatial.in_dims()) d.push_back(e);
  return d;
}
Dims AvgPoolGeometry::y_shape() const {
  Dims d = {batch, channels};
  for (int64_t e : spatial.out_dims()) d.push_back(e);
  return d;
}

const PadSpec& op_padding(const AvgPoolParams& p) { return p.padding; }

StatusOr<OpGeometry> geometry_of(const Case& c, const AvgPoolParams&) {
  KC_ASSIGN_OR_RETURN(AvgPoolGeometry g, avgpool_geometry(c));
  return OpGeometry{g};
}

void drop_padding(AvgPoolParams& p) {
  p.padding = PadSpec{PadKind::kValid, {}};
  p.ceil_mode = false;
}

}  // namespace kc
