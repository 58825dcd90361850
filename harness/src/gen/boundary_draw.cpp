// The fuzzer's boundary phase (see boundary_sweep.h, boundary_case): the boundary sweep's
// shapes with drawn data, so that a long fuzz run meets every threshold of every op with
// data of its own, and with `fill: boundary`. The shapes are computed once per generator.
#include <memory>

#include "gen/boundary_sweep.h"
#include "gen/pick.h"

namespace kc::gen {

rc::Gen<Case> boundary_case(const OpSet& ops, const Options& options) {
  auto shapes = std::make_shared<const std::vector<Case>>(boundary_shapes(ops));
  if (shapes->empty()) return valid_case(ops, options);  // an op without swept quantities
  const bool special = (options.data & (kNaN | kInfinity)) != 0;
  const Fill other = special ? Fill::kBoundary : Fill::kRandom;
  const rc::Gen<Fill> fill = detail::pick<Fill>({{1, Fill::kRandom}, {special ? 2u : 0u, other}});
  // The index at full size: inRange scales with RapidCheck's size, which would favour the
  // first shapes (conv's) in the small cases of a run.
  const rc::Gen<size_t> index = rc::gen::resize(rc::kNominalSize, rc::gen::inRange<size_t>(0, shapes->size()));
  return rc::gen::map(rc::gen::tuple(index, fill, rc::gen::arbitrary<uint64_t>(), detail::flag(25)),
                      [shapes, steer = options.steer](const std::tuple<size_t, Fill, uint64_t, bool>& t) {
                        Case c = (*shapes)[std::get<0>(t)];
                        // A stack refuses fill: boundary (its layers' single-op cases carry it).
                        c.data.fill = is_stack(c) && std::get<1>(t) == Fill::kBoundary ? Fill::kRandom : std::get<1>(t);
                        c.data.seed = std::get<2>(t);
                        c.deterministic = std::get<3>(t);
                        c.tolerance.kind = ToleranceKind::kBound;  // exact needs an integer fill
                        return steer ? steer_seed(std::move(c)) : c;
                      });
}

rc::Gen<Case> fuzz_case(const OpSet& ops, const Options& options) {
  return rc::gen::weightedOneOf<Case>({{7, valid_case(ops, options)}, {1, boundary_case(ops, options)}});
}

}  // namespace kc::gen
