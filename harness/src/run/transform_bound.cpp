// Transform algorithms' error bounds (see transform_bound.h).
#include "run/transform_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kc {
namespace {

// The largest row of |A^T| (|G| 1 (.) |B^T| 1) for the Winograd F(m, r) matrices of
// Lavin and Gray (interpolation points 0, +-1, +-2 and infinity), the forms oneDNN and
// cuDNN use: the most one output of a tile can gather from unit |g| and |d|.
//   F(2,3): |G| 1 = (1, 1.5, 1.5, 1), |B^T| 1 = (2, 2, 2, 2), |A^T| rows (1 1 1 0),
//           (0 1 1 1): 8.
//   F(4,3): |G| 1 = (1/4, 1/2, 1/2, 7/24, 7/24, 1), |B^T| 1 = (10, 10, 10, 6, 6, 10),
//           A^T's last row (0 1 1 8 8 1): 5 + 5 + 14 + 14 + 10 = 48.
double winograd_growth(int m, int r) {
  if (r == 3 && m == 2) return 8.0;
  if (r == 3 && m == 4) return 48.0;
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
