// influence (op: stack): how much each input position can move the output, measured
// as |dx| summed over batch and channels under the case's random cotangent. Reports
// the fraction of positions with zero gradient and the ratio of the smallest to the
// median influence; positions under kBlind * median are blind spots, named with how
// far from the border they lie (a valid stack starves its border: the corner reaches
// one output through one path). FAILED when the backend gives exactly zero gradient
// where the oracle's is not (dropped borders); MISTRUSTED when the oracle's is all zero.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "check_list.h"
#include "common.h"

namespace kc::checks {
namespace {

constexpr double kBlind = 1e-3;

std::vector<double> influence_map(const Tensor& dx) {
  const int64_t planes = dx.shape[0] * dx.shape[1];
  const int64_t positions = dx.size() / planes;
  std::vector<double> m(static_cast<size_t>(positions), 0.0);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < positions; ++i) m[static_cast<size_t>(i)] += std::abs(dx[p * positions + i]);
  }
  return m;
}

// Distance of flat spatial position i to the nearest edge of the plane.
int64_t border_distance(const Dims& shape, int64_t i) {
  int64_t d = INT64_MAX;
  for (size_t k = shape.size(); k-- > 2;) {
    const int64_t c = i % shape[k];
    i /= shape[k];
    d = std::min({d, c, shape[k] - 1 - c});
  }
  return d;
}

}  // namespace

std::string influence_not_applicable(const CheckContext& ctx) {
  return ctx.stack == nullptr ? "applies to op: stack only" : std::string();
}

CheckResult influence_run(const CheckContext& ctx) {
  const StackRun& cand = ctx.stack->cand;
  const StackRun& ref = ctx.stack->ref;
  if (!cand.status.ok()) return call_failed("influence", "the stack", cand.status);
  if (std::string why = distrust("dx", ref.dx, true); !why.empty()) {
    return make_result("influence", Disposition::kMistrusted, why);
  }
  const std::vector<double> m = influence_map(cand.dx), mr = influence_map(ref.dx);
  std::vector<double> sorted = m;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2], smallest = sorted.front();
  int64_t zeros = 0, blind = 0, dropped = 0, farthest = 0, on_border = 0;
  const Dims& shape = cand.dx.shape;
  for (size_t i = 0; i < m.size(); ++i) {
    zeros += m[i] == 0.0;
    dropped += m[i] == 0.0 && mr[i] != 0.0;
    if (m[i] < kBlind * median) {
      ++blind;
      on_border += border_distance(shape, static_cast<int64_t>(i)) == 0;
      farthest = std::max(farthest, border_distance(shape, static_cast<int64_t>(i)));
    }
  }
  CheckResult r = make_result("influence", Disposition::kPassed);
  char buf[256];
  std::snprintf(buf, sizeof buf, "zero-gradient positions %.4g%% (%lld of %zu); smallest/median influence %.3g",
                100.0 * static_cast<double>(zeros) / static_cast<double>(m.size()), static_cast<long long>(zeros),
                m.size(), median > 0.0 ? smallest / median : 0.0);
  r.message = buf;
  if (blind > 0) {
    r.message += "; blind spots: " + std::to_string(blind) + " positions under 0.1% of the median influence, " +
                 std::to_string(on_border) + " of them on the border, all within " + std::to_string(farthest) +
                 " of it" + (on_border > 0 ? " (border blind spots)" : "");
  } else {
    r.message += "; no blind spots";
  }
  if (dropped > 0) {
    r.disposition = Disposition::kFailed;
    r.message += "; " + std::to_string(dropped) + " positions get zero gradient where the oracle's is not (dropped)";
  }
  return r;
}

}  // namespace kc::checks
