// shape: SAME keeps ceil(in/s) in every dim (checked against that formula, not the
// contract code), and every output the backend returns has the contract's shape. An
// output smaller than the contract is named as erosion, per dim; a larger one by how
// many outputs it adds, and for a pool with ceil_mode where the window it adds
// would start (docs/ops.md, "Max pooling": a window starting in the right padding is dropped).
#include "check_list.h"
#include "common.h"
#include "ops/op_module.h"

namespace kc::checks {
namespace {

// Why an output dim holds more positions than the contract's d.out.
std::string surplus(size_t dim, int64_t extra, const DimGeometry& d, bool ceil_mode) {
  std::string s =
      "dim " + std::to_string(dim) + " has " + std::to_string(extra) + " more output" + (extra > 1 ? "s" : "");
  if (ceil_mode) {
    const int64_t start = d.out * d.stride - d.pad_lo;  // of the first window past the contract's
    s += ": with ceil_mode the next window would start at input position " + std::to_string(start) +
         (start >= d.in ? ", past the input (in the right padding or beyond): such a window is dropped" : "");
  }
  return s;
}

}  // namespace

void expect_shape(const std::string& tensor, const Dims& got, const Dims& want, CheckResult& r,
                  const SpatialGeometry* dims, bool ceil_mode) {
  if (got == want) return;
  r.disposition = Disposition::kFailed;
  r.message += tensor + " has shape " + dims_to_string(got) + ", the contract says " + dims_to_string(want);
  if (got.size() == want.size()) {
    for (size_t i = 2; i < got.size(); ++i) {
      if (got[i] < want[i]) {
        r.message += " (dim " + std::to_string(i - 2) + " eroded by " + std::to_string(want[i] - got[i]) + ")";
      } else if (got[i] > want[i] && dims != nullptr && i - 2 < dims->dims.size()) {
        r.message += " (" + surplus(i - 2, got[i] - want[i], dims->dims[i - 2], ceil_mode) + ")";
      }
    }
  }
  r.message += "; ";
}

CheckResult shape_run(const CheckContext& ctx) {
  if (ctx.stack != nullptr) return stack_shape_run(ctx);
  CheckResult r = make_result("shape", Disposition::kPassed);
  const SpatialGeometry& sg = spatial_of(ctx.geo);
  const PadKind kind = padding_of(ctx.c.op).kind;
  if (kind == PadKind::kSame || kind == PadKind::kSameLower) {
    for (size_t i = 0; i < sg.dims.size(); ++i) {
      const DimGeometry& d = sg.dims[i];
      const int64_t want = (d.in + d.stride - 1) / d.stride;  // SAME: ceil(in / s)
      if (d.out != want) {
        r.disposition = Disposition::kFailed;
        r.message += "SAME dim " + std::to_string(i) + " resolves to " + std::to_string(d.out) +
                     " outputs, ceil(in/s) is " + std::to_string(want) + "; ";
      }
    }
  }
  if (!ctx.cand.forward.ok()) return r;
  const bool backward = ctx.cand.ran_backward && ctx.cand.backward.ok();
  std::visit([&](const auto& g) { expect_shapes(g, ctx, backward, r); }, ctx.geo);
  if (r.disposition == Disposition::kPassed) r.message = "y " + dims_to_string(y_shape_of(ctx.geo));
  return r;
}

}  // namespace kc::checks
