// The steering of generated cases (gen.h, steer_seed): the data seed of a case is
// redrawn, a few times at most, where the oracle's own results on its data could not
// tell a right kernel from a wrong one. Only the seed changes; the sizes, the fill and
// any zero regions stay as drawn, so what the geometry or a region makes degenerate on
// purpose stays too.
#include <memory>
#include <variant>

#include "backend/invoke.h"
#include "checks/checks.h"
#include "core/fill.h"
#include "gen/gen.h"
#include "kc/backend.h"
#include "kc/ref/conv.h"
#include "stack/stack.h"
#include "stack/stack_exec.h"

namespace kc::gen {
namespace {

// Whether the oracle's results on the case's data leave a check nothing to judge: y,
// dx, dw or db all zero, constant or mostly zero (the trust rule, distrust_output(): a
// max pool's dx only all zero, a conv's dx on the elements windows read), data on which
// a partial dw or db sum is the right one (partial_sum_blind_spot(), on the fill without
// its zero regions: fill_blind_spot()), or for
// conv, <conv(x, w), dy> without bias exactly 0 (the adjoint identity then holds
// trivially: sparse integer fills cancel); for a stack, the oracle's (f64) dx, which
// its backward and influence checks need (a relu stack that zeroes every path). Both
// sides of such a case agree whatever a kernel writes there, so the case is MISTRUSTED
// instead of checked.
bool degenerate_stack(const Case& c) {
  const StatusOr<std::vector<StackLayer>> layers = stack_layers(c);
  if (!layers.ok()) return false;
  const StatusOr<StackInputs> in = make_stack_inputs(c, *layers);
  if (!in.ok()) return false;
  const std::unique_ptr<Backend> oracle = make_reference_backend();
  const StackRun ref = run_stack(*oracle, *layers, *in, {CheckpointPolicy{}, DType::kF64, true, false});
  return ref.status.ok() && !distrust("dx", ref.dx).empty();
}

// Whether weight_share's partial sums cannot judge the case's data (a relu, a sparse
// dy, x = 0 or cancelling terms make a partial sum of one sample, tile or position the
// right one). The blind spot a zero region makes (a whole sample of x) is the point of
// its case: only one that the fill itself makes is redrawn, so the test runs on the
// data without the regions.
bool fill_blind_spot(const Case& c, const ConvGeometry& g, const OpInputs& in, const OpOutputs& o) {
  if (!c.data.zero.empty()) {
    Case plain = c;
    plain.data.zero.clear();
    const StatusOr<OpInputs> plain_in = make_inputs(plain);
    if (!plain_in.ok()) return false;
    const std::unique_ptr<Backend> oracle = make_reference_backend();
    const OpOutputs plain_o = invoke(*oracle, plain, OpGeometry{g}, *plain_in);
    if (!plain_o.forward.ok() || !plain_o.backward.ok()) return false;
    return fill_blind_spot(plain, g, *plain_in, plain_o);
  }
  Tensor dz = in.dy;
  if (op_traits(c).relu) {
    for (int64_t i = 0; i < dz.size(); ++i) dz[i] = o.y[i] > 0.0 ? dz[i] : 0.0;
  }
  return !partial_sum_blind_spot(g, in.x, dz, o.dw, o.db).empty();
}

bool degenerate_op(const Case& c) {
  StatusOr<OpGeometry> geo = op_geometry(c);
  StatusOr<OpInputs> in = make_inputs(c);
  if (!geo.ok() || !in.ok()) return false;
  const std::unique_ptr<Backend> oracle = make_reference_backend();
  const OpOutputs o = invoke(*oracle, c, *geo, *in);
  if (!o.forward.ok() || !o.backward.ok()) return false;
  const std::pair<const char*, const Tensor*> outputs[] = {{"y", &o.y}, {"dx", &o.dx}, {"dw", &o.dw}, {"db", &o.db}};
  for (const auto& [name, t] : outputs) {
    // What the geometry makes zero is left out, as the checks take it.
    if (t->size() > 0 && !distrust_output(*geo, name, *t).empty()) return true;
  }
  const auto* g = std::get_if<ConvGeometry>(&*geo);
  if (g == nullptr) return false;
  if (fill_blind_spot(c, *g, *in, o)) return true;
  if (op_traits(c).relu) return false;
  ConvGeometry linear = *g;
  linear.bias = false;
  const Tensor y = ref::conv_forward(linear, in->x, in->w, nullptr);
  double inner = 0.0;
  for (int64_t i = 0; i < y.size(); ++i) inner += y[i] * in->dy[i];
  return inner == 0.0;
}

enum class Data { kUsable, kDegenerate, kThrew };

// The oracle runs in whatever process steers: kcheck fuzz steers in the worker that
// then checks the case, so that a crash is that case's CRASHED, not the end of the
// run. An exception it throws (out of memory) makes steer_seed() keep the drawn seed,
// and the case's check then reports it.
Data degenerate_data(const Case& c) {
  try {
    return (is_stack(c) ? degenerate_stack(c) : degenerate_op(c)) ? Data::kDegenerate : Data::kUsable;
  } catch (...) {
    return Data::kThrew;
  }
}

// The case's data seed is the first of seed, seed + 1, ..., seed + kSeedTries - 1
// whose data is not degenerate (degenerate_data), or the drawn seed where none is:
// a relu that zeroes every output, a relu stack that zeroes every path, an all-zero
// cotangent or bias gradient, a sum that cancels, are redrawn rather than checked
// MISTRUSTED. The fill, the sizes and the sparsity of a fill stay as drawn; what the
// geometry alone makes degenerate stays too.
constexpr uint64_t kSeedTries = 6;

}  // namespace

Case steer_seed(Case c, const std::function<void(uint64_t seed)>& trying) {
  const uint64_t drawn = c.data.seed;
  for (uint64_t k = 0; k < kSeedTries; ++k) {
    c.data.seed = drawn + k;
    if (trying) trying(c.data.seed);
    const Data d = degenerate_data(c);
    if (d == Data::kUsable) return c;
    if (d == Data::kThrew) break;
  }
  c.data.seed = drawn;
  return c;
}

}  // namespace kc::gen
