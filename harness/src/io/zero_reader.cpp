// Internal to kc_io: reading `data: zero:`, the regions of the filled inputs set to 0
// (ZeroRegion in kc/case.h). Field rules only; whether a region lies within its
// tensor is validate()'s (core/zero_region.h), which knows the shapes.
#include "io/case_yaml.h"

namespace kc::io {
namespace {

// [lo, hi]: exactly two integers.
StatusOr<std::array<int64_t, 2>> read_box_pair(const Value& v) {
  if (!v.is_sequence() || v.node().size() != 2) return v.type_error("a [lo, hi] pair");
  const std::vector<Value> lohi = v.items();
  KC_ASSIGN_OR_RETURN(int64_t lo, read_int(lohi[0]));
  KC_ASSIGN_OR_RETURN(int64_t hi, read_int(lohi[1]));
  return std::array<int64_t, 2>{lo, hi};
}

StatusOr<std::vector<std::array<int64_t, 2>>> read_box(const Value& v) {
  if (!v.is_sequence()) return v.type_error("a list of [lo, hi] pairs, one per spatial dim");
  if (v.node().size() == 0) {
    return v.error("an empty list: give one [lo, hi] per spatial dim (or leave box out for the whole plane)");
  }
  std::vector<std::array<int64_t, 2>> box;
  for (const Value& item : v.items()) {
    KC_ASSIGN_OR_RETURN(auto pair, read_box_pair(item));
    box.push_back(pair);
  }
  return box;
}

StatusOr<ZeroRegion> read_region(const Value& v) {
  KC_RETURN_IF_ERROR(v.check_keys({"tensor", "sample", "channel", "box"}));
  ZeroRegion r;
  std::optional<Value> tensor = v.get("tensor");
  if (!tensor) return v.missing("tensor");
  KC_ASSIGN_OR_RETURN(r.tensor, read_enum<ZeroTensor>(
                                    *tensor, {{"x", ZeroTensor::kX}, {"w", ZeroTensor::kW}, {"dy", ZeroTensor::kDy}}));
  if (auto f = v.get("sample")) {
    KC_ASSIGN_OR_RETURN(r.sample, read_int(*f));
  }
  if (auto f = v.get("channel")) {
    KC_ASSIGN_OR_RETURN(r.channel, read_int(*f));
  }
  if (auto f = v.get("box")) {
    KC_ASSIGN_OR_RETURN(r.box, read_box(*f));
  }
  return r;
}

}  // namespace

StatusOr<std::vector<ZeroRegion>> read_zero_regions(const Value& v) {
  if (!v.is_sequence()) return v.type_error("a list of regions {tensor: x|w|dy, sample, channel, box}");
  std::vector<ZeroRegion> regions;
  for (const Value& item : v.items()) {
    KC_ASSIGN_OR_RETURN(ZeroRegion r, read_region(item));
    regions.push_back(std::move(r));
  }
  return regions;
}

}  // namespace kc::io
