// The max pool op's module in kc_core (docs/ops.md, "Max pooling"): its geometry, its
// field and geometry rules (a window must touch the input, padding at most half its
// extent), expected indices within a plane, and the checks that never apply to it. A
// stack's layer reuses the field rules.
#include <string>

#include "core/format.h"
#include "core/validate_limits.h"
#include "core/validate_rules.h"
#include "core/zero_region.h"
#include "kc/shape.h"
#include "ops/op_module.h"

namespace kc {

Status check_pool_fields(const MaxPoolParams& p, const InputSpec& in, const Limits& limits) {
  const size_t rank = in.spatial.size();
  KC_RETURN_IF_ERROR(check_dims("maxpool.kernel", p.kernel, rank, true, 1, limits));
  KC_RETURN_IF_ERROR(check_dims("maxpool.stride", p.stride, rank, false, 1, limits));
  KC_RETURN_IF_ERROR(check_dims("maxpool.dilation", p.dilation, rank, false, 1, limits));
  return check_padding_fields("maxpool.padding", p.padding, rank, limits);
}

namespace {

Status check_pool_geometry(const PoolGeometry& g) {
  KC_RETURN_IF_ERROR(check_nonempty(std::string(MaxPoolParams::kName), g.spatial));
  for (size_t i = 0; i < g.spatial.dims.size(); ++i) {
    const DimGeometry& d = g.spatial.dims[i];
    const std::string dim = "dim " + num(static_cast<int64_t>(i));
    if (d.pad_lo > d.extent() / 2 || d.pad_hi > d.extent() / 2) {
      return invalid_argument("maxpool.padding: " + dim + " pads " + num(d.pad_lo) + "/" + num(d.pad_hi) +
                              ", more than half the window extent " + num(d.extent()) + " (at most " +
                              num(d.extent() / 2) + ")");
    }
    // With dilation a window can straddle the input without touching it; its max and
    // index would be undefined, so such a case is refused. The first tap at or after
    // input element 0 is found arithmetically: scanning the taps would make validation
    // quadratic in the window size (minutes for a large 1-D window).
    for (int64_t o = 0; o < d.out; ++o) {
      const int64_t start = o * d.stride - d.pad_lo;
      const int64_t k0 = start >= 0 ? 0 : (-start + d.dilation - 1) / d.dilation;
      const bool touches = k0 < d.kernel && start + k0 * d.dilation < d.in;
      if (!touches) {
        return invalid_argument("maxpool: " + dim + ": window " + num(o) +
                                " covers no input element (only padding); reduce padding or dilation");
      }
    }
  }
  return ok_status();
}

// Expected max-pool indices are flat positions in one input plane: one past its last
// position cannot come from any kernel, so the case is wrong, not the kernel.
Status check_expected_indices(const Case& c, const PoolGeometry& g) {
  auto it = c.expected.find("indices");
  if (it == c.expected.end()) return ok_status();
  const int64_t plane = element_count(g.spatial.in_dims());
  for (int64_t i = 0; i < it->second.size(); ++i) {
    if (it->second[i] < static_cast<double>(plane)) continue;
    return invalid_argument("expected.indices: " + num(static_cast<int64_t>(it->second[i])) + " (element " + num(i) +
                            ") is outside the input plane, whose positions are 0 to " + num(plane - 1) +
                            " (indices are flat positions in one plane)");
  }
  return ok_status();
}

const char* const kNoIndices = "inference mode keeps no indices, so there is no backward to check";

}  // namespace

Status validate_op(const Case& c, const MaxPoolParams& p, const Limits& limits) {
  KC_RETURN_IF_ERROR(check_pool_fields(p, c.input, limits));
  // Field rules hold: every size is within max_size, so the geometry arithmetic is safe
  // (the estimate below saturates rather than overflowing).
  KC_RETURN_IF_ERROR(check_memory(c, limits));
  KC_RETURN_IF_ERROR(check_work(c, limits));
  const PoolGeometry g = unchecked_pool_geometry(c);
  KC_RETURN_IF_ERROR(check_pool_geometry(g));
  if (g.mode == PoolMode::kInference) {  // no indices, hence no backward, to compare with
    for (const char* name : {"indices", "dx"}) {
      if (c.expected.count(name)) {
        return invalid_argument(std::string("expected.") + name +
                                ": maxpool.mode inference keeps no indices and has no backward");
      }
    }
  }
  KC_RETURN_IF_ERROR(check_accumulation(c, g.spatial.kernel_count()));
  KC_RETURN_IF_ERROR(check_tensor_shapes(c, {{"x", g.x_shape()}, {"dy", g.y_shape()}}, "tensors"));
  KC_RETURN_IF_ERROR(
      check_tensor_shapes(c, {{"y", g.y_shape()}, {"indices", g.y_shape()}, {"dx", g.x_shape()}}, "expected"));
  KC_RETURN_IF_ERROR(check_expected_indices(c, g));
  KC_RETURN_IF_ERROR(check_zero_regions(c.data.zero, {g.x_shape(), {}, g.y_shape()}, MaxPoolParams::kName));
  return check_exact_tolerance(c, {"x"}, &g);
}

PoolGeometry unchecked_pool_geometry(const Case& c) {
  const MaxPoolParams& p = std::get<MaxPoolParams>(c.op);
  const size_t rank = c.input.spatial.size();
  PoolGeometry g;
  g.batch = c.input.batch;
  g.channels = c.input.channels;
  g.ceil_mode = p.ceil_mode;
  g.mode = p.mode;
  g.tie = p.tie;
  g.spatial = build_spatial(c.input.spatial, p.kernel, p.stride.empty() ? p.kernel : p.stride,
                            or_ones(p.dilation, rank), p.padding, p.ceil_mode);
  return g;
}

StatusOr<PoolGeometry> pool_geometry(const Case& c) {
  if (!std::holds_alternative<MaxPoolParams>(c.op)) {
    return invalid_argument(std::string("op: expected a maxpool case, got ") + std::string(op_name(c.op)));
  }
  KC_RETURN_IF_ERROR(validate(c));
  return unchecked_pool_geometry(c);
}

OpCost op_cost(const PoolGeometry& g, DType dtype, BenchOp op) {
  const double es = storage_bytes(dtype);
  const double x = elements(g.x_shape()), y = elements(g.y_shape());
  const double taps = static_cast<double>(g.spatial.kernel_count());
  const double index_bytes = taps <= 256 ? 1.0 : 4.0;
  switch (op) {
    case BenchOp::kPoolInference:
      return {y * taps, (x + y) * es};
    case BenchOp::kPoolTraining:
      return {y * taps, (x + y) * es + y * index_bytes};
    case BenchOp::kPoolBackward:  // dy and indices read, every dx written (zeros included)
      return {y, (y + x) * es + y * index_bytes};
    default:
      return {};
  }
}

OpTraits op_traits(const MaxPoolParams&) { return {.indices = true}; }

InputShapes input_shapes(const Case& c, const MaxPoolParams&) {
  const PoolGeometry g = unchecked_pool_geometry(c);
  return {g.x_shape(), g.y_shape(), std::nullopt, std::nullopt};
}

std::string never_applies(const Case&, const MaxPoolParams& p, std::string_view check) {
  if ((check == "backward" || check == "gradcheck") && p.mode == PoolMode::kInference) return kNoIndices;
  if (check == "adjoint")
    return "max pool is not linear in x, so it has no adjoint identity (gradcheck and argmax cover it)";
  if (check == "weight_share") return "max pool has no weights, so nothing is shared";
  return "";
}

// y, dy and the indices in 6 arrays of y's shape.
std::vector<MemoryPart> memory_parts(const Case& c, const MaxPoolParams& p, const std::string& f, const Cause& input) {
  const PoolGeometry g = unchecked_pool_geometry(c);
  return pool_parts(g.spatial, g.x_shape(), g.y_shape(), p.padding, f, input, 6);
}

// Comparisons.
OpWork op_work(const Case& c, const MaxPoolParams&) {
  const PoolGeometry g = unchecked_pool_geometry(c);
  return {static_cast<double>(g.batch) * static_cast<double>(g.channels) * window_work(g.spatial), " comparisons"};
}

const PadSpec& op_padding(const MaxPoolParams& p) { return p.padding; }

StatusOr<OpGeometry> geometry_of(const Case& c, const MaxPoolParams&) {
  KC_ASSIGN_OR_RETURN(PoolGeometry g, pool_geometry(c));
  return OpGeometry{g};
}

void drop_padding(MaxPoolParams& p) {
  p.padding = PadSpec{PadKind::kValid, {}};
  p.ceil_mode = false;
}

}  // namespace kc
