// Direct (brute-force) definition of average pooling (docs/ops.md, "Average pooling"),
// used only by tests to prove reference/src/avgpool.cpp. Written independently of it:
// for every output it visits every position of the window in the padded frame, one
// kernel offset at a time, and counts what the divisor counts as it goes:
//   position p = o*s + k - lo (per dim) is an input element when 0 <= p < in, padding
//   when -lo <= p < in + hi, and the ceil-mode overhang beyond that.
// The backward enumerates, for every input element, every output window and tests
// membership, so that it shares no loop structure with the forward.
#include <cstdint>

#include "kc_direct.h"

namespace kc::ref::direct {
namespace {

int64_t flatten(const Dims& i, const Dims& ext) {
  int64_t f = 0;
  for (size_t j = 0; j < ext.size(); ++j) f = f * ext[j] + i[j];
  return f;
}

struct Window {
  double sum = 0.0;
  int64_t inputs = 0;  // input elements covered
  int64_t padded = 0;  // positions inside the padded frame, input elements included
};

// Sums window `o` of one plane of x (null: only counts).
Window visit(const AvgPoolGeometry& g, const Dims& o, const double* plane) {
  const SpatialGeometry& s = g.spatial;
  const Dims kernel = s.kernel_dims(), in = s.in_dims();
  Window w;
  for (int64_t k = 0; k < s.kernel_count(); ++k) {
    const Dims kk = unflatten(k, kernel);
    bool input = true, frame = true;
    Dims pos(kk.size());
    for (size_t j = 0; j < kk.size(); ++j) {
      const DimGeometry& d = s.dims[j];
      pos[j] = o[j] * d.stride + kk[j] - d.pad_lo;
      input = input && pos[j] >= 0 && pos[j] < d.in;
      frame = frame && pos[j] >= -d.pad_lo && pos[j] < d.in + d.pad_hi;
    }
    if (frame) ++w.padded;
    if (!input) continue;
    ++w.inputs;
    if (plane != nullptr) w.sum += plane[flatten(pos, in)];
  }
  return w;
}

double divisor_of(const AvgPoolGeometry& g, const Window& w) {
  if (g.divisor > 0) return static_cast<double>(g.divisor);
  return static_cast<double>(g.count_include_pad ? w.padded : w.inputs);
}

}  // namespace

Tensor avgpool_forward(const AvgPoolGeometry& g, const Tensor& x) {
  Tensor y = Tensor::zeros(DType::kF64, g.y_shape());
  const Dims out = g.spatial.out_dims();
  const int64_t in_count = g.spatial.in_count(), out_count = g.spatial.out_count();
  for (int64_t p = 0; p < g.batch * g.channels; ++p) {
    for (int64_t o = 0; o < out_count; ++o) {
      const Window w = visit(g, unflatten(o, out), x.data.data() + p * in_count);
      y.data[static_cast<size_t>(p * out_count + o)] = w.sum / divisor_of(g, w);
    }
  }
  return y;
}

Tensor avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy) {
  Tensor dx = Tensor::zeros(DType::kF64, g.x_shape());
  const Dims out = g.spatial.out_dims(), in = g.spatial.in_dims();
  const int64_t in_count = g.spatial.in_count(), out_count = g.spatial.out_count();
  for (int64_t p = 0; p < g.batch * g.channels; ++p) {
    for (int64_t i = 0; i < in_count; ++i) {
      const Dims ii = unflatten(i, in);
      double sum = 0.0;
      for (int64_t o = 0; o < out_count; ++o) {
        const Dims oo = unflatten(o, out);
        bool member = true;
        for (size_t j = 0; j < ii.size(); ++j) {
          const DimGeometry& d = g.spatial.dims[j];
          const int64_t k = ii[j] + d.pad_lo - oo[j] * d.stride;
          member = member && k >= 0 && k < d.kernel;
        }
        if (member) sum += dy.data[static_cast<size_t>(p * out_count + o)] / divisor_of(g, visit(g, oo, nullptr));
      }
      dx.data[static_cast<size_t>(p * in_count + i)] = sum;
    }
  }
  return dx;
}

}  // namespace kc::ref::direct
