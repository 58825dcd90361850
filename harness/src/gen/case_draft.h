// Internal to the generators: what every op's generator (`op_case` in each op module's
// `<op>_gen.cpp`) draws besides its own fields: the size mode (usual, wide or threshold
// caps), the dtype, the data draft (fill, seed, inline x, zero region, determinism), and
// the realising of a draft into a finished case (threshold sizes applied, inline data,
// the data seed steered). Field order is shrink order (gen.h).
#pragma once

#include <cstdint>

#include <rapidcheck.h>

#include "core/fill.h"
#include "gen/gen.h"
#include "gen/threshold.h"
#include "gen/zero_draft.h"
#include "kc/case.h"

namespace kc::gen::detail {

struct DataDraft {
  Fill fill = Fill::kRandom;
  uint64_t seed = 0;
  bool exact = false;          // tolerance: exact (only with fill: integer, where sums are exact)
  bool inline_x = false;       // inline x from data_tensor (not with fill: integer)
  detail::ZeroDraft zero;      // drawn after them: the fields above draw as they did before it
  bool deterministic = false;  // deterministic: true (drawn last, likewise)
};

// The options with the usual caps, the wide ones (wide_percent of the time), the aligned
// ones (aligned_percent: conv channels multiples of 8) or the small ones of a threshold
// case (threshold_percent); aligned and threshold are taken from the usual share: a draw
// that was wide still is, with the same case.
struct Sized {
  Options o;
  bool threshold = false;
};
rc::Gen<Sized> sized(const Options& o);

rc::Gen<DType> dtype_gen();
// `fill: special` (NaN, infinities, signed zeros, subnormals) and `fill: boundary` (each
// dtype's largest, smallest and tie-making values, docs/cases.md) for every op and dtype;
// `pool`: more ties and inline x (a pool's argmax and window sums are where they matter).
rc::Gen<DataDraft> data_draft(bool pool, const Options& o);
void apply_data(const DataDraft& d, Case& c);
Case steered(Case c);
// The case (its sizes final), with inline x when the draft asks for it, its zero region
// (none on an inline x) and its data seed steered (steer).
rc::Gen<Case> finish(Case c, const DataDraft& d, unsigned kinds, bool steer);

// A draft realised as a case, through apply_threshold() for a threshold case (whose
// threshold draft is drawn after the draft, so that the draft draws as it would alone).
template <class Draft, class Realise>
rc::Gen<Case> realised(const Sized& s, const rc::Gen<Draft>& draft, Realise realise) {
  const Options o = s.o;
  if (!s.threshold) {
    return rc::gen::mapcat(draft, [o, realise](const Draft& d) { return finish(realise(d), d.data, o.data, o.steer); });
  }
  return rc::gen::mapcat(rc::gen::pair(draft, detail::threshold_draft()),
                         [o, realise](const std::pair<Draft, detail::ThresholdDraft>& p) {
                           const Case c = detail::apply_threshold(realise(p.first), p.second, o.caps);
                           return finish(c, p.first.data, o.data, o.steer);
                         });
}

}  // namespace kc::gen::detail
