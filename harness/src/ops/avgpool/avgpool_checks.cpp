// The average pool module's part of the checks: what its dx can be judged on, the
// shapes of its outputs, and how many terms each output sums (and by what it divides).
#include <algorithm>
#include <string>
#include <vector>

#include "checks/common.h"
#include "checks/padding_coverage.h"
#include "checks/padding_run.h"
#include "checks/shape_mutations.h"
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

void compare_gradients(const AvgPoolGeometry&, const CheckContext& ctx, const GradientCompare& compare, CheckResult&,
                       std::string&) {
  compare("dx", ctx.cand.dx, ctx.ref.dx, ctx.abs.dx);
}

void add_shape_mutations(std::vector<ShapeMutation>& m, const AvgPoolParams& p) { add_pool_mutations(m, p); }

// Padding (checks/padding.cpp): whether the windows keep their divisors on the
// explicitly padded input: a divisor given, or padding counted with no ceil_mode window
// past the padding (else the padded run divides by other counts, and only coverage is
// checked).
bool padded_run_judges(const AvgPoolGeometry& g) {
  if (g.divisor > 0) return true;
  if (!g.count_include_pad) return false;
  for (const DimGeometry& d : g.spatial.dims) {
    if ((d.out - 1) * d.stride + d.kernel > d.padded()) return false;
  }
  return true;
}
// dx against the interior of the zero-padded run's dx.
void compare_padded_run(const AvgPoolGeometry& g, const CheckContext& ctx, const Padded& pd, const OpOutputs& run,
                        rules::Findings& f, CheckResult& r) {
  compare_dx(ctx, pd, run, g.spatial, g.x_shape(), PaddingMode::kZeros, f, r);
}
// Average pool: a window only in padding may give 0.
void check_coverage(const AvgPoolGeometry& g, const CheckContext& ctx, rules::Findings& f, std::string& notes) {
  OpInputs ones;
  ones.x = Tensor::filled(ctx.c.dtype, g.x_shape(), 1.0);
  ones.dy = Tensor::filled(ctx.c.dtype, g.y_shape(), 1.0);
  rules::check_ones_coverage(ctx, ones, g.spatial, PaddingMode::kZeros, false, "all-ones x and dy", f, notes);
}

}  // namespace kc::checks
