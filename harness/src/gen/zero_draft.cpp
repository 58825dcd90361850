// The zero region of a generated case (see zero_draft.h).
#include "gen/zero_draft.h"

#include <optional>

#include "backend/invoke.h"
#include "kc/shape.h"
#include "pick.h"

namespace kc::gen::detail {
namespace {

constexpr int64_t kIndexRange = 1 << 16;  // indices are drawn in [0, kIndexRange) and reduced

// dy's tile: in each spatial dim a run [lo, lo + length) of the output, within it.
// Empty when the tile would be every output position.
std::vector<std::array<int64_t, 2>> tile_box(const ZeroDraft& d, const Dims& out) {
  std::vector<std::array<int64_t, 2>> box;
  bool whole = true;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t lo = d.tile[2 * i] % out[i];
    const int64_t length = 1 + d.tile[2 * i + 1] % (out[i] - lo);
    box.push_back({lo, lo + length});
    whole = whole && length == out[i];
  }
  return whole ? std::vector<std::array<int64_t, 2>>{} : box;
}

// The region of one kind in a tensor of shape t, or none where it would be all of it.
std::optional<ZeroRegion> region_of(ZeroKind kind, const ZeroDraft& d, const Dims& t) {
  const bool on_x = kind == ZeroKind::kXSample || kind == ZeroKind::kXPlane || kind == ZeroKind::kXChannel;
  ZeroRegion r{on_x ? ZeroTensor::kX : ZeroTensor::kDy, std::nullopt, std::nullopt, {}};
  switch (kind) {
    case ZeroKind::kXSample:
      if (t[0] < 2) return std::nullopt;
      r.sample = d.sample % t[0];
      break;
    case ZeroKind::kXChannel:
      if (t[1] < 2) return std::nullopt;
      r.channel = d.channel % t[1];
      break;
    case ZeroKind::kXPlane:
    case ZeroKind::kDyPlane:
      if (t[0] * t[1] < 2) return std::nullopt;
      r.sample = d.sample % t[0];
      r.channel = d.channel % t[1];
      break;
    case ZeroKind::kDyTile:
      r.box = tile_box(d, Dims(t.begin() + 2, t.end()));
      if (r.box.empty()) return std::nullopt;
      break;
  }
  return r;
}

}  // namespace

rc::Gen<ZeroDraft> zero_draft(uint64_t percent) {
  using rc::gen::set;
  const auto kind = pick<ZeroKind>({{3, ZeroKind::kXSample},
                                    {2, ZeroKind::kXPlane},
                                    {2, ZeroKind::kXChannel},
                                    {1, ZeroKind::kDyPlane},
                                    {2, ZeroKind::kDyTile}});
  return rc::gen::build<ZeroDraft>(
      set(&ZeroDraft::on, flag(percent)), set(&ZeroDraft::kind, kind),
      set(&ZeroDraft::sample, between(0, kIndexRange - 1)), set(&ZeroDraft::channel, between(0, kIndexRange - 1)),
      set(&ZeroDraft::tile, rc::gen::container<std::vector<int64_t>>(6, between(0, kIndexRange - 1))));
}

std::vector<ZeroRegion> realise_zero(const ZeroDraft& d, const Case& c) {
  const StatusOr<OpGeometry> geo = op_geometry(c);
  if (!d.on || !geo.ok()) return {};
  const Dims x = x_shape_of(*geo), y = y_shape_of(*geo);
  // The drawn kind, or where the case has no room for it (a batch of 1, one channel, an
  // inline x), the next that fits, in the order of the kinds.
  for (int k = 0; k < 5; ++k) {
    const auto kind = static_cast<ZeroKind>((static_cast<int>(d.kind) + k) % 5);
    const bool on_x = kind == ZeroKind::kXSample || kind == ZeroKind::kXPlane || kind == ZeroKind::kXChannel;
    if (on_x && c.tensors.count("x")) continue;
    if (std::optional<ZeroRegion> r = region_of(kind, d, on_x ? x : y)) return {*r};
  }
  return {};
}

}  // namespace kc::gen::detail
