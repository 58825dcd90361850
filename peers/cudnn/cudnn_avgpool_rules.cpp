// The cudnn peer's average-pooling rules (cudnn_avgpool_rules.h).
#include "cudnn_avgpool_rules.h"

#include <algorithm>
#include <string>

namespace kc::gpu {

// Whether cuDNN's own padding runs an average pool: symmetric in every dim and narrower
// than the window. Otherwise the engine pre-pads x with zeros, which is the contract only
// when the padding is counted (count_include_pad); supports() refuses the rest.
bool cudnn_pads_avgpool(const AvgPoolGeometry& g) {
  return std::all_of(g.spatial.dims.begin(), g.spatial.dims.end(),
                     [](const DimGeometry& d) { return d.pad_lo == d.pad_hi && d.pad_lo < d.kernel; });
}

// What cuDNN's average pooling cannot compute as the contract says (docs/ops.md,
// "Average pooling"). ok for a case whose geometry does not resolve (invalid).
Status avgpool_supports(const Case& c, const AvgPoolParams& p) {
  if (p.divisor) {
    return unimplemented("avgpool.divisor: " + std::to_string(*p.divisor) +
                         ": cuDNN divides by the window's size or its count of input elements, never by a given "
                         "divisor");
  }
  const StatusOr<AvgPoolGeometry> g = avgpool_geometry(c);
  if (!g.ok()) return ok_status();
  for (size_t i = 0; i < g->spatial.dims.size(); ++i) {
    const DimGeometry& d = g->spatial.dims[i];
    const int64_t floor_out = output_extent(d.in, d.kernel, d.stride, 1, d.pad_lo, d.pad_hi, false);
    if (d.out != floor_out) {
      return unimplemented("avgpool.ceil_mode: dim " + std::to_string(i) + " has " + std::to_string(d.out) +
                           " windows where floor gives " + std::to_string(floor_out) +
                           "; cuDNN has no ceil mode, and its last window would need padding past the case's");
    }
  }
  if (!g->count_include_pad && !cudnn_pads_avgpool(*g)) {
    return unimplemented(
        "avgpool.padding: asymmetric with count_include_pad: false: cuDNN pads symmetrically, and explicit zeros "
        "in its place would be counted in the divisor");
  }
  return ok_status();
}

}  // namespace kc::gpu
