// The refusals both GPU engines share (engine.h): no f64 storage, and no tensor of
// 2^31 elements or more (the kernels index with int; see conv_shape.h).
#include <limits>

#include "engine.h"

namespace kc::gpu {
namespace {

constexpr int64_t kMaxElements = std::numeric_limits<int>::max();

Status check_elements(const std::string& engine, const char* what, const Dims& shape) {
  const int64_t n = element_count(shape);
  if (n < kMaxElements) return ok_status();
  return unimplemented(std::string(what) + " " + dims_to_string(shape) + " has " + std::to_string(n) +
                       " elements; " + engine + " indexes tensors with 32-bit integers (fewer than 2^31)");
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
  if (std::holds_alternative<MaxPoolParams>(c.op)) {
    auto g = pool_geometry(c);
    if (!g.ok()) return ok_status();  // invalid: the runner says so
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
