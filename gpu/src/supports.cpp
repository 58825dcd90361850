// The refusals both GPU engines share (engine.h): no f64 storage or accumulation, and no tensor of
// 2^31 - 2^20 elements or more (the kernels index with int, see conv_shape.h; the
// headroom keeps a tile's or a loop's step past the last element below 2^31).
#include <limits>

#include "engine.h"

namespace kc::gpu {
namespace {

constexpr int64_t kMaxElements = int64_t{std::numeric_limits<int>::max()} + 1 - (int64_t{1} << 20);

Status check_elements(const std::string& engine, const char* what, const Dims& shape) {
  const int64_t n = element_count(shape);
  if (n < kMaxElements) return ok_status();
  return unimplemented(std::string(what) + " " + dims_to_string(shape) + " has " + std::to_string(n) + " elements; " +
                       engine + " indexes tensors with 32-bit integers (fewer than 2^31 - 2^20)");
}

Dims padded_x_shape(const ConvGeometry& g) {
  Dims d{g.batch, g.in_channels};
  for (const DimGeometry& s : g.spatial.dims) d.push_back(s.padded());
  return d;
}

}  // namespace

Status common_supports(const Case& c, const std::string& engine) {
  if (c.dtype == DType::kF64) {
    return unimplemented("f64 storage: " + engine + " runs f32, f16 and bf16 (with f32 accumulation)");
  }
  if (c.accumulation == DType::kF64) {  // a narrower one is fine: f32 sums meet its looser bound
    return unimplemented("accumulation: f64: " + engine + " accumulates in f32");
  }
  if (std::holds_alternative<MaxPoolParams>(c.op)) {
    auto g = pool_geometry(c);
    if (!g.ok()) return ok_status();  // invalid: the runner says so
    KC_RETURN_IF_ERROR(check_elements(engine, "x", g->x_shape()));
    return check_elements(engine, "y", g->y_shape());
  }
  if (std::holds_alternative<AvgPoolParams>(c.op)) {
    auto g = avgpool_geometry(c);
    if (!g.ok()) return ok_status();
    KC_RETURN_IF_ERROR(check_elements(engine, "x", g->x_shape()));
    return check_elements(engine, "y", g->y_shape());
  }
  auto g = conv_geometry(c);
  if (!g.ok()) return ok_status();
  KC_RETURN_IF_ERROR(check_elements(engine, "x", g->x_shape()));
  KC_RETURN_IF_ERROR(check_elements(engine, "padded x", padded_x_shape(*g)));
  KC_RETURN_IF_ERROR(check_elements(engine, "w", g->w_shape()));
  return check_elements(engine, "y", g->y_shape());
}

}  // namespace kc::gpu
