// Properties that tie the generators to the rest of the harness: generated cases
// (op: stack too) survive the YAML writers unchanged (block file and one-line
// reproducer), generated invalid cases are refused with their expected text by
// validate(), the runner and the reader and never crash, and the shape contract agrees
// with a brute-force enumeration of windows, every layer of a stack included.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "core/check_table.h"
#include "core/validate.h"
#include "gen_support.h"
#include "kc/backend.h"
#include "kc/case_io.h"
#include "kc/runner.h"
#include "kc/shape.h"
#include "stack/stack.h"

namespace kc {
namespace {

// The fields the generators leave at their defaults, varied here so that the round
// trip covers them too.
Case with_optional_fields(Case c) {
  const std::string alphabet = "az AZ09:#{}[],&*!|>'\"%@`\\-?\t\x01\x7f\xc3\xa9";
  if (*rc::gen::arbitrary<bool>()) c.name = *rc::gen::container<std::string>(rc::gen::elementOf(alphabet));
  if (*rc::gen::arbitrary<bool>()) {
    c.checks = *rc::gen::unique<std::vector<std::string>>(rc::gen::element<std::string>(
        "shape", "forward", "backward", "gradcheck", "adjoint", "weight_share", "argmax", "padding"));
    // A check that can never apply to the case is refused on reading (core/check_table.h).
    std::erase_if(c.checks, [&](const std::string& name) { return !check_never_applies(c, name).empty(); });
  }
  c.deterministic = *rc::gen::arbitrary<bool>();
  if (c.tolerance.kind == ToleranceKind::kBound && *rc::gen::arbitrary<bool>()) {
    const double atol = *gen::data_value(DType::kF64, gen::kOrdinary | gen::kSubnormal | gen::kSignedZero);
    c.tolerance = Tolerance{ToleranceKind::kExplicit, *rc::gen::inRange(0, 1000) * 1e-6, std::abs(atol)};
  }
  return c;
}

void assert_loads_back(const Case& c, const std::string& text) {
  const std::vector<LoadedCase> loaded = parse_cases(text, "gen.yaml");
  RC_ASSERT(loaded.size() == 1u);
  if (!loaded[0].c.ok()) RC_FAIL(loaded[0].c.status().to_string() + "\n" + text);
  RC_ASSERT(*loaded[0].c == c);
}

RC_GTEST_PROP(GenRoundTrip, GeneratedCasesSurviveTheYamlWriters, ()) {
  const Case c = with_optional_fields(*gen::valid_case(gen::kAllOps));
  assert_loads_back(c, case_to_yaml(c));
  assert_loads_back(c, case_to_one_line(c));
}

RC_GTEST_PROP(GenRoundTrip, GeneratedStacksSurviveTheYamlWriters, ()) {
  const Case c = with_optional_fields(*gen::op_case_of<StackParams>());
  assert_loads_back(c, case_to_yaml(c));
  assert_loads_back(c, case_to_one_line(c));
}

void assert_refused(const gen::InvalidCase& bad) {
  RC_TAG(bad.rule);
  if (!bad.reader_only) {
    const Status s = validate(bad.c);
    RC_ASSERT(!s.ok());
    RC_ASSERT(s.message().find(bad.error) != std::string::npos);
    auto reference = make_reference_backend();
    const CaseResult r = check_case(bad.c, *reference);  // refused before anything is allocated
    RC_ASSERT(r.disposition == Disposition::kInvalid);
    RC_ASSERT(r.message.find(bad.error) != std::string::npos);
  }
  const std::vector<LoadedCase> loaded = parse_cases(bad.yaml, "bad.yaml");
  RC_ASSERT(loaded.size() == 1u);
  RC_ASSERT(!loaded[0].c.ok());
  RC_ASSERT(loaded[0].c.status().message().find(bad.error) != std::string::npos);
  RC_ASSERT(!loaded[0].expect.pass);
  auto reference = make_reference_backend();
  const CaseResult r = check_loaded(loaded[0], *reference);
  RC_ASSERT(r.disposition == Disposition::kPassed);
}

RC_GTEST_PROP(GenInvalid, EveryInvalidCaseIsRefusedWithItsError, ()) {
  assert_refused(*gen::invalid_case(gen::kAllOps));
}

RC_GTEST_PROP(GenInvalid, EveryInvalidStackIsRefusedWithItsError, ()) {
  assert_refused(*gen::invalid_case(gen::only<StackParams>()));
}

// Average pools are not in the mix: their rules (no dilation, the divisor, a window of
// only padding without count_include_pad) are drawn here.
RC_GTEST_PROP(GenInvalid, EveryInvalidAvgPoolIsRefusedWithItsError, ()) {
  assert_refused(*gen::invalid_case(gen::only<AvgPoolParams>()));
}

// Windows of one dim, placed one by one: a window is kept while it fits in the
// padded input, or (ceil_mode) while the window a stride before it leaves part of
// the padded input uncovered; a ceil_mode window that would start in the right
// padding is dropped.
int64_t count_windows(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi, bool ceil_mode) {
  const int64_t padded = in + lo + hi, extent = d * (k - 1) + 1;
  int64_t n = 0;
  for (int64_t start = 0;; start += s) {
    const bool fits = start + extent <= padded;
    const bool overhang = ceil_mode && !fits && start - s + extent < padded;
    if (!fits && !overhang) break;
    if (ceil_mode && start >= in + lo) break;
    ++n;
  }
  return n;
}

RC_GTEST_PROP(GenShape, OutputExtentCountsTheWindows, ()) {
  const int64_t in = *rc::gen::inRange<int64_t>(1, 40), k = *rc::gen::inRange<int64_t>(1, 8);
  const int64_t s = *rc::gen::inRange<int64_t>(1, 6), d = *rc::gen::inRange<int64_t>(1, 5);
  int64_t lo = *rc::gen::inRange<int64_t>(0, 10), hi = *rc::gen::inRange<int64_t>(0, 10);
  const bool ceil_mode = *rc::gen::arbitrary<bool>();
  if (ceil_mode) {  // ceil_mode is max pool's, whose padding is at most half the window
    lo = std::min(lo, (d * (k - 1) + 1) / 2);
    hi = std::min(hi, (d * (k - 1) + 1) / 2);
  }
  RC_ASSERT(std::max<int64_t>(0, output_extent(in, k, s, d, lo, hi, ceil_mode)) ==
            count_windows(in, k, s, d, lo, hi, ceil_mode));
}

RC_GTEST_PROP(GenShape, SamePaddingKeepsCeilInOverStride, ()) {
  const int64_t in = *rc::gen::inRange<int64_t>(1, 40), k = *rc::gen::inRange<int64_t>(1, 8);
  const int64_t s = *rc::gen::inRange<int64_t>(1, 6), d = *rc::gen::inRange<int64_t>(1, 5);
  const bool lower = *rc::gen::arbitrary<bool>();
  const auto [lo, hi] = resolve_same(in, k, s, d, lower);
  const int64_t out = (in + s - 1) / s;
  RC_ASSERT(count_windows(in, k, s, d, lo, hi, false) == out);
  RC_ASSERT((lower ? lo - hi : hi - lo) >= 0);  // the odd one goes to hi (same) or lo (same_lower)
  RC_ASSERT(std::abs(lo - hi) <= 1);
  // The least padding that keeps them: one less in total loses the last window.
  if (lo + hi > 0) RC_ASSERT(count_windows(in, k, s, d, 0, lo + hi - 1, false) == out - 1);
}

RC_GTEST_PROP(GenShape, GeneratedGeometriesCountTheWindows, ()) {
  const Case c = *gen::valid_case(gen::kAllOps);
  const SpatialGeometry g = op_traits(c).indices ? pool_geometry(c)->spatial : conv_geometry(c)->spatial;
  const bool ceil_mode = op_traits(c).indices && std::get<MaxPoolParams>(c.op).ceil_mode;
  for (const DimGeometry& d : g.dims) {
    RC_ASSERT(d.out == count_windows(d.in, d.kernel, d.stride, d.dilation, d.pad_lo, d.pad_hi, ceil_mode));
  }
}

RC_GTEST_PROP(GenShape, GeneratedStackLayersCountTheWindows, ()) {
  const Case c = *gen::op_case_of<StackParams>();
  const std::optional<MaxPoolParams>& pool = std::get<StackParams>(c.op).pool;
  const std::vector<StackLayer> layers = *stack_layers(c);
  for (const StackLayer& l : layers) {
    for (const DimGeometry& d : l.conv.spatial.dims) {
      RC_ASSERT(d.out == count_windows(d.in, d.kernel, d.stride, d.dilation, d.pad_lo, d.pad_hi, false));
    }
    if (!l.pool) continue;
    for (const DimGeometry& d : l.pool->spatial.dims) {
      RC_ASSERT(d.out == count_windows(d.in, d.kernel, d.stride, d.dilation, d.pad_lo, d.pad_hi, pool->ceil_mode));
    }
  }
}

}  // namespace
}  // namespace kc
