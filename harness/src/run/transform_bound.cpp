// Transform algorithms' error bounds (see transform_bound.h).
#include "run/transform_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kc {
namespace {

// ||A^T||_inf * ||G||_inf * ||B^T||_inf of the Winograd F(m, r) matrices of Lavin and
// Gray (interpolation points 0, +-1, +-2 and infinity), the forms oneDNN and cuDNN use.
//   F(2,3): A^T rows sum to 3, G to 1.5 (its rows 1/2, 1/2, 1/2), B^T to 2: 9.
//   F(4,3): A^T's last row 1+1+8+8+1 = 19, G's last row 1, B^T's rows 4+5+1 = 10: 190.
double winograd_norms(int m, int r) {
  if (r == 3 && m == 2) return 9.0;
  if (r == 3 && m == 4) return 190.0;
  return std::numeric_limits<double>::infinity();
}

}  // namespace

double transform_growth(const Numerics& n, int spatial_rank) {
  if (!n.transform()) return 0.0;
  if (n.algorithm != Algorithm::kWinograd) return std::numeric_limits<double>::infinity();
  return std::pow(winograd_norms(n.transform_m, n.transform_r), spatial_rank);
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
