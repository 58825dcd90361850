// The parts of the memory estimate and their causes (core/memory_parts.h).
#include "core/memory_parts.h"

#include <algorithm>

#include "core/format.h"

namespace kc {

int64_t product(const Dims& d) {
  int64_t n = 1;
  for (int64_t v : d) n = saturating_mul(n, v);
  return n;
}

std::string dims_text(const Dims& d) { return d.size() == 1 ? num(d[0]) : dims_to_string(d); }

Dims concat(Dims a, const Dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double ratio(int64_t a, int64_t b) { return static_cast<double>(a) / static_cast<double>(std::max<int64_t>(b, 1)); }

Cause padding_cause(const std::string& f, const PadSpec& spec, const SpatialGeometry& g, double factor) {
  size_t at = 0;
  for (size_t i = 0; i < g.dims.size(); ++i) {
    if (g.dims[i].pad_lo + g.dims[i].pad_hi > g.dims[at].pad_lo + g.dims[at].pad_hi) at = i;
  }
  const DimGeometry& d = g.dims[at];
  const std::string pads = " pads " + num(d.pad_lo) + "/" + num(d.pad_hi) + " in dim " + num(static_cast<int64_t>(at));
  if (spec.kind == PadKind::kExplicit) return {factor, f + ".padding", f + ".padding, which" + pads};
  const std::string same = spec.kind == PadKind::kSame ? ", for which padding same" : ", for which padding same_lower";
  if (d.dilation > d.kernel - 1) return {factor, f + ".dilation", f + ".dilation " + num(d.dilation) + same + pads};
  return {factor, f + ".kernel", f + ".kernel " + num(d.kernel) + same + pads};
}

std::vector<MemoryPart> pool_parts(const SpatialGeometry& s, const Dims& x, const Dims& y, const PadSpec& pad,
                                   const std::string& f, const Cause& input, int64_t y_copies) {
  const double grown = ratio(product(s.out_dims()), product(s.in_dims()));
  return {{"x and dx", x, 4, input, {}},
          {y_copies > 4 ? "y, dy and indices" : "y and dy", y, y_copies, input, {padding_cause(f, pad, s, grown)}}};
}

double window_work(const SpatialGeometry& s) {
  double n = 1.0;
  for (const DimGeometry& d : s.dims) n *= static_cast<double>(d.out) * static_cast<double>(d.kernel);
  return n;
}

}  // namespace kc
