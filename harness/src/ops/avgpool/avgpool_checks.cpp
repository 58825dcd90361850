// The average pool module's part of the checks: what its dx can be judged on, the
// shapes of its outputs, and how many terms each output sums (and by what it divides).
#include <algorithm>
#include <string>
#include <vector>

#include "checks/common.h"
#include "judge/tolerance.h"
#include "ops/op_module.h"

namespace kc::checks {

// An average pool's dx counts only the elements some window reads: with a stride past
// the kernel the others are zero by construction, for every kernel.
std::string distrust_dx(const AvgPoolGeometry& g, const Tensor& ref, std::string_view source) {
  std::vector<std::vector<char>> per_dim;
  for (const DimGeometry& d : g.spatial.dims) {
    std::vector<char> read(static_cast<size_t>(d.in), 0);
    for (int64_t o = 0; o < d.out; ++o) {
      const int64_t start = o * d.stride - d.pad_lo;
      for (int64_t i = std::max<int64_t>(start, 0); i < std::min(start + d.kernel, d.in); ++i) {
        read[static_cast<size_t>(i)] = 1;
      }
    }
    per_dim.push_back(std::move(read));
  }
  const Dims in = g.spatial.in_dims();
  const int64_t plane = element_count(in);
  std::vector<char> counted(static_cast<size_t>(ref.size()), 0);
  for (int64_t p = 0; p < plane; ++p) {
    int64_t rest = p;
    bool read = true;
    for (size_t a = in.size(); a-- > 0;) {
      read = read && per_dim[a][static_cast<size_t>(rest % in[a])];
      rest /= in[a];
    }
    for (int64_t nc = 0; read && nc < g.batch * g.channels; ++nc) counted[static_cast<size_t>(nc * plane + p)] = 1;
  }
  return distrust_counted("dx", ref, source, counted);
}

void expect_shapes(const AvgPoolGeometry& g, const CheckContext& ctx, bool backward, CheckResult& r) {
  expect_shape("y", ctx.cand.y.shape, g.y_shape(), r, &g.spatial, g.ceil_mode);
  if (backward) expect_shape("dx", ctx.cand.dx.shape, g.x_shape(), r);
}

// y: a window's sum and one division; dx: a term per window holding the element (at most
// the kernel's count), each a division. A kernel may divide last, so the sums can pass
// the accumulator's range by the divisor (sum_scale).
void tolerance_terms(const AvgPoolGeometry& g, std::string_view, ToleranceSpec& s) {
  s.n = g.spatial.kernel_count() + 1;
  s.sum_scale = static_cast<double>(g.divisor > 0 ? g.divisor : g.spatial.kernel_count());
}

}  // namespace kc::checks
