// Zero regions (see zero_region.h): validated against the tensors' shapes, then applied
// by one pass over the spatial plane (an empty box means the whole plane).
#include "core/zero_region.h"

#include "core/format.h"

namespace kc {
namespace {

std::string at(size_t i, std::string_view field) {
  return "data.zero[" + num(static_cast<int64_t>(i)) + "]" + (field.empty() ? "" : ".") + std::string(field);
}

// What the first two axes of each tensor are called in messages.
struct AxisNames {
  const char* sample;
  const char* channel;
  const char* spatial;
};

AxisNames axis_names(ZeroTensor t) {
  if (t == ZeroTensor::kW) return {"output channels", "input channels per group", "kernel"};
  if (t == ZeroTensor::kX) return {"batch", "channels", "input"};
  return {"batch", "channels", "output"};
}

Status check_index(const std::string& field, const std::optional<int64_t>& v, int64_t extent, std::string_view tensor,
                   const char* what) {
  if (!v || (*v >= 0 && *v < extent)) return ok_status();
  return invalid_argument(field + ": " + num(*v) + " is outside " + std::string(tensor) + "'s " + what + " 0 to " +
                          num(extent - 1));
}

Status check_box(size_t i, const ZeroRegion& r, const Dims& shape, const AxisNames& names) {
  const std::string_view tensor = zero_tensor_name(r.tensor);
  const size_t rank = shape.size() - 2;
  if (!r.box.empty() && r.box.size() != rank) {
    return invalid_argument(at(i, "box") + ": has " + num(static_cast<int64_t>(r.box.size())) + " entries but " +
                            std::string(tensor) + " has " + num(static_cast<int64_t>(rank)) +
                            " spatial dims (one [lo, hi] per dim)");
  }
  for (size_t d = 0; d < r.box.size(); ++d) {
    const auto [lo, hi] = r.box[d];
    const std::string field = at(i, "box") + "[" + num(static_cast<int64_t>(d)) + "]";
    if (lo >= hi) {
      return invalid_argument(field + ": lo " + num(lo) + " >= hi " + num(hi) +
                              " (a box is half-open, [lo, hi), and must not be empty)");
    }
    const int64_t extent = shape[d + 2];
    if (lo < 0 || hi > extent) {
      return invalid_argument(field + ": [" + num(lo) + ", " + num(hi) + "] is outside " + std::string(tensor) + "'s " +
                              names.spatial + " extent " + num(extent) + " in spatial dim " +
                              num(static_cast<int64_t>(d)) + " (0 <= lo < hi <= " + num(extent) + ")");
    }
  }
  return ok_status();
}

}  // namespace

Status check_zero_regions(const std::vector<ZeroRegion>& zero, const ZeroShapes& shapes, std::string_view op) {
  for (size_t i = 0; i < zero.size(); ++i) {
    const ZeroRegion& r = zero[i];
    const Dims& shape = r.tensor == ZeroTensor::kX ? shapes.x : r.tensor == ZeroTensor::kW ? shapes.w : shapes.dy;
    const std::string_view tensor = zero_tensor_name(r.tensor);
    if (shape.size() < 3) {
      return invalid_argument(at(i, "tensor") + ": op " + std::string(op) + " has no input " + std::string(tensor));
    }
    const AxisNames names = axis_names(r.tensor);
    KC_RETURN_IF_ERROR(check_index(at(i, "sample"), r.sample, shape[0], tensor, names.sample));
    KC_RETURN_IF_ERROR(check_index(at(i, "channel"), r.channel, shape[1], tensor, names.channel));
    KC_RETURN_IF_ERROR(check_box(i, r, shape, names));
  }
  return ok_status();
}

void apply_zero_region(Tensor& t, const ZeroRegion& r) {
  const Dims dims(t.shape.begin() + 2, t.shape.end());
  const int64_t plane = element_count(dims);
  const int64_t n0 = r.sample.value_or(0), n1 = r.sample ? *r.sample + 1 : t.shape[0];
  const int64_t c0 = r.channel.value_or(0), c1 = r.channel ? *r.channel + 1 : t.shape[1];
  for (int64_t p = 0; p < plane; ++p) {
    const std::vector<int64_t> coord = unravel(p, dims);
    bool inside = true;
    for (size_t d = 0; d < r.box.size(); ++d) inside = inside && coord[d] >= r.box[d][0] && coord[d] < r.box[d][1];
    if (!inside) continue;
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t c = c0; c < c1; ++c) t[(n * t.shape[1] + c) * plane + p] = 0.0;
    }
  }
}

}  // namespace kc
