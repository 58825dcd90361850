// Transform algorithms' error bounds (see transform_bound.h).
#include "judge/transform_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kc {
namespace {

// The largest row of sqrt(|A^T|^2 (|G|^2 1 (.) |B^T|^2 1)) (squares elementwise) for the
// Winograd F(m, r) matrices of Lavin and Gray (interpolation points 0, +-1, +-2 and
// infinity), the forms oneDNN and cuDNN use: the 2-norm of the weights with which the
// roundings of unit |g| and |d| reach one output of a tile.
//   F(2,3): |G|^2 1 = (1, 3/4, 3/4, 1), |B^T|^2 1 = (2, 2, 2, 2), A^T's rows (1 1 1 0),
//           (0 1 -1 -1): sqrt(2 + 3/2 + 3/2) = sqrt(5).
//   F(4,3): |G|^2 1 = (1/16, 1/12, 1/12, 7/192, 7/192, 1), |B^T|^2 1 = (42, 34, 34, 10,
//           10, 42), A^T's last row (0 1 -1 8 -8 1): sqrt(17/6 * 2 + 64 * 70/192 * 2 + 42)
//           = sqrt(283/3).
double winograd_growth(int m, int r) {
  if (r == 3 && m == 2) return std::sqrt(5.0);
  if (r == 3 && m == 4) return std::sqrt(283.0 / 3.0);
  return std::numeric_limits<double>::infinity();
}

}  // namespace

double transform_growth(const Numerics& n, int spatial_rank) {
  if (!n.transform()) return 0.0;
  if (n.algorithm != Algorithm::kWinograd) return std::numeric_limits<double>::infinity();
  return std::pow(winograd_growth(n.transform_m, n.transform_r), spatial_rank);
}

int64_t transform_terms(const Numerics& n, int spatial_rank) {
  if (!n.transform()) return 0;
  const int64_t alpha = n.transform_m + n.transform_r - 1;
  return spatial_rank * (n.transform_r + 2 * alpha);
}

void spread_over_planes(Tensor& t) {
  if (t.size() == 0) return;
  int64_t plane = 1;
  for (size_t i = 2; i < t.shape.size(); ++i) plane *= t.shape[i];
  if (t.shape.size() < 2) plane = 1;
  for (int64_t start = 0; start < t.size(); start += plane) {
    double most = 0.0;
    for (int64_t i = start; i < start + plane; ++i) most = std::max(most, std::abs(t[i]));
    for (int64_t i = start; i < start + plane; ++i) t[i] = most;
  }
}

}  // namespace kc
