// golden: the backend's outputs against `expected:` tensors from an independent
// implementation, within the case's tolerance. NaN in an expected tensor is never a
// wildcard; indices must match exactly. The trust rule applies to the expected values:
// a pass against an all-zero, constant or mostly zero expected tensor is MISTRUSTED
// (a kernel that writes zeros would pass it); a max-pool dx is sparse by construction.
// More on the method: docs/notes.md, section harness/src/checks/golden.cpp.
#include <optional>

#include "check_list.h"
#include "common.h"
#include "padding_taps.h"

namespace kc::checks {
namespace {

const Tensor* output(const OpOutputs& o, const std::string& name) {
  if (name == "y") return &o.y;
  if (name == "dx") return &o.dx;
  if (name == "dw") return &o.dw;
  if (name == "db") return &o.db;
  return nullptr;
}

void compare_indices(const Tensor& want, const OpOutputs& cand, CheckResult& r) {
  if (!cand.indices) {
    mark_failed(r);
    r.message += "indices: expected, but the backend kept none; ";
    return;
  }
  Tensor got = Tensor::zeros(DType::kF64, cand.indices->shape);
  for (int64_t i = 0; i < got.size(); ++i) got[i] = static_cast<double>(cand.indices->data[static_cast<size_t>(i)]);
  compare_tensors("indices", got, want, nullptr, ToleranceSpec{{ToleranceKind::kExact}, DType::kF64, 1, std::nullopt},
                  r);
}

// A candidate conv's y, or a plain conv's dw, as a kernel that skips zero-padding taps
// gives them: where that differs, the expected tensor is judged as the oracle's is.
std::optional<SkippedTaps> without_padding_taps(const CheckContext& ctx, const std::string& name) {
  const ConvGeometry* g = conv_geo(ctx);
  if (g == nullptr || ctx.is_reference) return std::nullopt;
  if (name == "y") return y_without_padding_taps(ctx, *g);
  if (name == "dw" && std::holds_alternative<ConvParams>(ctx.c.op)) return dw_without_padding_taps(ctx, *g, ctx.in.dy);
  return std::nullopt;
}

}  // namespace

CheckResult golden_run(const CheckContext& ctx) {
  CheckResult r = make_result("golden", Disposition::kPassed);
  std::string why, unjudged;
  bool judged = false;
  for (const auto& [name, want] : ctx.c.expected) {
    if (name == "indices") {
      judged = true;
      compare_indices(want, ctx.cand, r);
      continue;
    }
    const bool grad = name != "y";
    if (grad && unsupported(ctx.cand.backward)) {
      unjudged += (unjudged.empty() ? "" : ", ") + name;
      continue;
    }
    judged = true;
    if (why.empty()) why = distrust_output(ctx.geo, name, want, "expected");  // of what is judged only
    if (grad && !ctx.cand.backward.ok()) {
      mark_failed(r);
      r.message += name + ": expected, but the backward returned " + ctx.cand.backward.to_string() + "; ";
      continue;
    }
    const Tensor* got = output(ctx.cand, name);
    const Tensor* abs = output(ctx.abs, name);
    if (got == nullptr) continue;
    if (const std::optional<SkippedTaps> skipped = without_padding_taps(ctx, name); skipped && abs) {
      compare_padding_taps(ctx, name.c_str(), *got, want, *abs, skipped, r);  // names or accepts the skip
      continue;
    }
    ToleranceSpec spec = tolerance_for(ctx, name);
    spec.cand_unrounded = ctx.is_reference;  // the oracle's outputs are f64
    // Expected tensors are the truth as written, not an f64 order that may have overflowed.
    spec.inputs_finite = false;
    spec.nonfinite_reach = nullptr;
    compare_tensors(name, *got, want, abs && abs->size() == want.size() ? abs : nullptr, spec, r);
  }
  if (!unjudged.empty()) {
    const std::string note = unjudged + " not judged: the backward returned " + ctx.cand.backward.to_string();
    if (!judged) return make_result("golden", Disposition::kSkipped, note);
    r.message += note + "; ";
  }
  if (r.disposition == Disposition::kPassed && !why.empty())
    return make_result("golden", Disposition::kMistrusted, why);
  return r;
}

}  // namespace kc::checks
