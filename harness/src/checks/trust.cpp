// The trust rule (docs/checks.md, "Trust"): a reference tensor that is all zero, constant or
// mostly zero cannot tell a right kernel from a wrong one, so a check relying on it is
// MISTRUSTED, never PASSED. The only home of that rule.
#include <algorithm>
#include <cmath>

#include "checks/checks.h"
#include "kc/shape.h"
#include "ops/op_module.h"
#include "padding_coverage.h"

namespace kc {
namespace {

// distrust(), counting only the elements `counted` flags (all when it is empty).
std::string distrust_of(std::string_view tensor, const Tensor& ref, bool sparse_by_construction,
                        std::string_view source, const std::vector<char>& counted) {
  int64_t finite = 0, zeros = 0, nonfinite = 0, nans = 0, pos_inf = 0;
  bool constant = true;
  double first = 0.0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double v = ref[i];
    if (!counted.empty() && !counted[static_cast<size_t>(i)]) continue;
    if (!std::isfinite(v)) {
      ++nonfinite;
      nans += std::isnan(v);
      pos_inf += v > 0;
      continue;
    }
    if (finite == 0) first = v;
    constant = constant && v == first;
    ++finite;
    zeros += v == 0.0;
  }
  const std::string t = std::string(source) + " " + std::string(tensor);
  // No element counted at all: every window reads only zero padding, so the tensor is
  // zero by construction (review: it was trusted, and golden passed a dx of zeros).
  if (!counted.empty() && std::find(counted.begin(), counted.end(), 1) == counted.end()) {
    return t + " is all zero: no window reads any element of x";
  }
  if (finite == 0) {
    // No finite element: one value everywhere (all NaN, all +inf or all -inf) is a
    // constant that a kernel writing it would match, whatever its arithmetic (a dw that is
    // a mean, or one position's, passes on all-NaN x). A mix still judges propagation.
    if (nonfinite == 0) return {};
    const int64_t neg_inf = nonfinite - nans - pos_inf;
    if (nans == nonfinite) return t + " is NaN at every element: a kernel that writes NaN would pass";
    if (pos_inf == nonfinite || neg_inf == nonfinite) {
      return t + " is " + (pos_inf ? "+inf" : "-inf") + " at every element: a kernel that writes it would pass";
    }
    return {};
  }
  if (zeros == finite) return t + " is all zero: a kernel that writes zeros would pass";
  if (sparse_by_construction) return {};
  if (constant && finite > 1) return t + " is constant: it cannot tell positions apart";
  if (finite >= 10 && zeros * 10 > finite * 9) {
    const bool all = std::find(counted.begin(), counted.end(), 0) == counted.end();
    return t + " is mostly zero (" + std::to_string(zeros) + " of " + std::to_string(finite) +
           (all ? ")" : " elements some window reads)");
  }
  return {};
}

}  // namespace

std::string distrust(std::string_view tensor, const Tensor& ref, bool sparse_by_construction, std::string_view source) {
  return distrust_of(tensor, ref, sparse_by_construction, source, {});
}

std::string distrust_counted(std::string_view tensor, const Tensor& ref, std::string_view source,
                             const std::vector<char>& counted) {
  return distrust_of(tensor, ref, false, source,
                     counted.size() == static_cast<size_t>(ref.size()) ? counted : std::vector<char>{});
}

std::vector<char> conv_input_read(const ConvGeometry& g) {
  const std::vector<std::vector<char>> per_dim = checks::rules::coverage_detail::covered_coords(g);
  const Dims in = g.spatial.in_dims();
  const int64_t plane = element_count(in);
  std::vector<char> read(static_cast<size_t>(g.batch * g.in_channels * plane), 1);
  for (int64_t p = 0; p < plane; ++p) {
    const std::vector<int64_t> c = unravel(p, in);
    bool covered = true;
    for (size_t a = 0; a < c.size(); ++a) covered = covered && per_dim[a][static_cast<size_t>(c[a])];
    if (covered) continue;
    for (int64_t nc = 0; nc < g.batch * g.in_channels; ++nc) read[static_cast<size_t>(nc * plane + p)] = 0;
  }
  return read;
}

std::string distrust_output(const OpGeometry& geo, std::string_view name, const Tensor& ref, std::string_view source) {
  if (name != "dx") return distrust(name, ref, false, source);
  return std::visit([&](const auto& g) { return checks::distrust_dx(g, ref, source); }, geo);
}

}  // namespace kc
