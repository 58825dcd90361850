// influence (op: stack): how much each input position can move the output, measured
// as |dx| summed over batch and channels under the case's random cotangent. Reports
// the fraction of positions with zero gradient and the ratio of the smallest to the
// median influence; positions under kBlind * median are blind spots, named with how
// far from the border they lie (a valid stack starves its border: the corner reaches
// one output through one path). FAILED when the backend gives exactly zero gradient
// where the oracle's is not (dropped borders), named by the slices (rows, columns,
// planes) it empties; MISTRUSTED when the oracle's f64 gradient is one value everywhere.
// More on the method: docs/notes.md, section harness/src/stack/influence.cpp.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "checks/check_list.h"
#include "checks/common.h"

namespace kc::checks {
namespace {

constexpr double kBlind = 1e-3;
constexpr int64_t kFlips = 2;
constexpr int64_t kSliceFed = 3;

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

// Slices (axis, coordinate) of the spatial plane where `m` is zero at every position
// and `mr` is nonzero at `min_fed` positions or more, named like "row 0" (a position,
// in rank 1).
std::vector<std::string> dropped_slices(const Dims& shape, const std::vector<double>& m, const std::vector<double>& mr,
                                        int64_t min_fed) {
  const Dims plane(shape.begin() + 2, shape.end());
  std::vector<std::string> out;
  for (size_t a = 0; a < plane.size(); ++a) {
    int64_t inner = 1;
    for (size_t b = a + 1; b < plane.size(); ++b) inner *= plane[b];
    std::vector<double> cand(static_cast<size_t>(plane[a]), 0.0);
    std::vector<int64_t> fed(static_cast<size_t>(plane[a]), 0);
    for (size_t i = 0; i < m.size(); ++i) {
      const size_t k = static_cast<size_t>(static_cast<int64_t>(i) / inner % plane[a]);
      cand[k] += m[i];
      fed[k] += mr[i] != 0.0;
    }
    static const char* const kNames[3][3] = {{"column", "", ""}, {"row", "column", ""}, {"plane", "row", "column"}};
    for (size_t k = 0; k < cand.size(); ++k) {
      if (cand[k] == 0.0 && fed[k] >= min_fed)
        out.push_back(std::string(kNames[plane.size() - 1][a]) + " " + std::to_string(k));
    }
  }
  return out;
}

// The influence map's statistics: zeros, those the oracle's map feeds (dropped), and
// the blind spots (under kBlind of the median) with their distance to the border.
struct InfluenceStats {
  double median = 0.0, smallest = 0.0;
  int64_t zeros = 0, blind = 0, dropped = 0, farthest = 0, on_border = 0;
};

InfluenceStats influence_stats(const Dims& shape, const std::vector<double>& m, const std::vector<double>& mr) {
  InfluenceStats st;
  std::vector<double> sorted = m;
  std::sort(sorted.begin(), sorted.end());
  st.median = sorted[sorted.size() / 2];
  st.smallest = sorted.front();
  for (size_t i = 0; i < m.size(); ++i) {
    st.zeros += m[i] == 0.0;
    st.dropped += m[i] == 0.0 && mr[i] != 0.0;
    if (m[i] < kBlind * st.median) {
      ++st.blind;
      st.on_border += border_distance(shape, static_cast<int64_t>(i)) == 0;
      st.farthest = std::max(st.farthest, border_distance(shape, static_cast<int64_t>(i)));
    }
  }
  return st;
}

std::string describe(const InfluenceStats& st, size_t positions) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "zero-gradient positions %.4g%% (%lld of %zu); smallest/median influence %.3g",
                100.0 * static_cast<double>(st.zeros) / static_cast<double>(positions),
                static_cast<long long>(st.zeros), positions, st.median > 0.0 ? st.smallest / st.median : 0.0);
  std::string s = buf;
  if (st.blind == 0) return s + "; no blind spots";
  return s + "; blind spots: " + std::to_string(st.blind) + " positions under 0.1% of the median influence, " +
         std::to_string(st.on_border) + " of them on the border, all within " + std::to_string(st.farthest) + " of it" +
         (st.on_border > 0 ? " (border blind spots)" : "");
}

// A candidate with dropped_elements elements of dx zero where the oracle's are not:
// FAILED when it is a real drop (f64, a whole slice empties, or too many positions
// without max pool), else noted as a possible rounding flip.
void judge_dropped(const CheckContext& ctx, int64_t dropped_elements, const InfluenceStats& st,
                   const std::vector<double>& m, const std::vector<double>& mr, CheckResult& r) {
  const Dims& shape = ctx.stack->cand.dx.shape;
  const bool f64 = ctx.c.dtype == DType::kF64;
  r.message += "; " + std::to_string(dropped_elements) + " elements of dx (" + std::to_string(st.dropped) +
               " positions) get zero gradient where the oracle's" +
               (f64 ? "" : " (in " + std::string(dtype_name(ctx.c.dtype)) + ")") + " is not";
  const bool pooled = has_max_pool(ctx.stack->layers);
  const bool rank1 = shape.size() == 3;
  const std::vector<std::string> slices = dropped_slices(shape, m, mr, f64 || (rank1 && !pooled) ? 1 : kSliceFed);
  const std::string where =
      slices.empty() ? ""
                     : ": no gradient at all in input " + slices.front() +
                           (slices.size() > 1 ? " and " + std::to_string(slices.size() - 1) + " more slices" : "");
  if (f64 || !slices.empty() || (!pooled && st.dropped > kFlips)) {
    r.disposition = Disposition::kFailed;
    r.message += " (dropped" + where + ")";
  } else {
    r.message += " (an f32 sum next to a rounding boundary of " + std::string(dtype_name(ctx.c.dtype)) +
                 " may flip a relu or an argmax: a failure when a slice empties" +
                 (pooled ? "" : " or past " + std::to_string(kFlips) + " positions") + where + ")";
  }
}

}  // namespace

CheckResult influence_run(const CheckContext& ctx) {
  const StackRun& cand = ctx.stack->cand;
  const StackRun& ref = ctx.stack->ref;
  if (!cand.status.ok()) return call_failed("influence", "the stack", cand.status);
  const std::string why = distrust("dx", ref.dx, true);
  const Tensor& pattern = ctx.stack->lowered.status.ok() ? ctx.stack->lowered.dx : ref.dx;
  const std::vector<double> m = influence_map(cand.dx), mr = influence_map(pattern);
  int64_t dropped_elements = 0;
  for (int64_t i = 0; i < cand.dx.size() && i < pattern.size(); ++i) {
    dropped_elements += cand.dx[i] == 0.0 && pattern[i] != 0.0;
  }
  const InfluenceStats st = influence_stats(cand.dx.shape, m, mr);
  CheckResult r = make_result("influence", Disposition::kPassed, describe(st, m.size()));
  if (ctx.is_reference) {
    r.message += "; dropped gradient is judged on candidates (here the oracle would meet itself)";
  } else if (dropped_elements > 0) {
    judge_dropped(ctx, dropped_elements, st, m, mr, r);
  }
  if (r.disposition == Disposition::kPassed && !why.empty())
    return make_result("influence", Disposition::kMistrusted, why);
  return r;
}

}  // namespace kc::checks
