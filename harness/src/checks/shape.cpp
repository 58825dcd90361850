// shape: SAME keeps ceil(in/s) in every dim (checked against that formula, not the
// contract code), and every output the backend returns has the contract's shape. An
// output smaller than the contract is named as erosion, per dim; a larger one by how
// many outputs it adds, and for a max pool with ceil_mode where the window it adds
// would start (docs/ops.md, "Max pooling": a window starting in the right padding is dropped).
#include "check_list.h"
#include "common.h"

namespace kc::checks {
namespace {

// Why an output dim holds more positions than the contract's d.out.
std::string surplus(size_t dim, int64_t extra, const DimGeometry& d, const PoolGeometry* pool) {
  std::string s =
      "dim " + std::to_string(dim) + " has " + std::to_string(extra) + " more output" + (extra > 1 ? "s" : "");
  if (pool != nullptr && pool->ceil_mode) {
    const int64_t start = d.out * d.stride - d.pad_lo;  // of the first window past the contract's
    s += ": with ceil_mode the next window would start at input position " + std::to_string(start) +
         (start >= d.in ? ", past the input (in the right padding or beyond): such a window is dropped" : "");
  }
  return s;
}

// `dims` (the op's spatial geometry) names each dim's difference when the ranks agree;
// `pool` adds the ceil_mode rule.
void expect_shape(const std::string& tensor, const Dims& got, const Dims& want, CheckResult& r,
                  const SpatialGeometry* dims = nullptr, const PoolGeometry* pool = nullptr) {
  if (got == want) return;
  r.disposition = Disposition::kFailed;
  r.message += tensor + " has shape " + dims_to_string(got) + ", the contract says " + dims_to_string(want);
  if (got.size() == want.size()) {
    for (size_t i = 2; i < got.size(); ++i) {
      if (got[i] < want[i]) {
        r.message += " (dim " + std::to_string(i - 2) + " eroded by " + std::to_string(want[i] - got[i]) + ")";
      } else if (got[i] > want[i] && dims != nullptr && i - 2 < dims->dims.size()) {
        r.message += " (" + surplus(i - 2, got[i] - want[i], dims->dims[i - 2], pool) + ")";
      }
    }
  }
  r.message += "; ";
}

const PadSpec& padding_of(const Case& c) {
  if (const auto* p = std::get_if<ConvParams>(&c.op)) return p->padding;
  if (const auto* p = std::get_if<ConvBiasReluParams>(&c.op)) return p->conv.padding;
  return std::get<MaxPoolParams>(c.op).padding;
}

}  // namespace

CheckResult shape_run(const CheckContext& ctx) {
  if (ctx.stack != nullptr) return stack_shape_run(ctx);
  CheckResult r = make_result("shape", Disposition::kPassed);
  const SpatialGeometry& sg = conv_geo(ctx) ? conv_geo(ctx)->spatial : pool_geo(ctx)->spatial;
  const PadKind kind = padding_of(ctx.c).kind;
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
  if (const auto* g = conv_geo(ctx)) {
    expect_shape("y", ctx.cand.y.shape, g->y_shape(), r, &g->spatial);
    if (ctx.cand.ran_backward && ctx.cand.backward.ok()) {
      expect_shape("dx", ctx.cand.dx.shape, g->x_shape(), r);
      expect_shape("dw", ctx.cand.dw.shape, g->w_shape(), r);
      if (g->bias) expect_shape("db", ctx.cand.db.shape, g->b_shape(), r);
    }
  } else {
    const PoolGeometry& pg = *pool_geo(ctx);
    expect_shape("y", ctx.cand.y.shape, pg.y_shape(), r, &pg.spatial, &pg);
    if (ctx.cand.indices) expect_shape("indices", ctx.cand.indices->shape, pg.y_shape(), r, &pg.spatial, &pg);
    if (ctx.cand.ran_backward && ctx.cand.backward.ok()) expect_shape("dx", ctx.cand.dx.shape, pg.x_shape(), r);
  }
  if (r.disposition == Disposition::kPassed) {
    r.message = "y " + dims_to_string(conv_geo(ctx) ? conv_geo(ctx)->y_shape() : pool_geo(ctx)->y_shape());
  }
  return r;
}

}  // namespace kc::checks
