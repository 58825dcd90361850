// Test helpers (see test_support.h).
#include "support/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kc::test {

Tensor random_tensor(DType dtype, const Dims& shape, std::mt19937_64& rng, double lo, double hi) {
  Tensor t = Tensor::zeros(dtype, shape);
  std::uniform_real_distribution<double> u(lo, hi);
  for (double& v : t.data) v = round_to(dtype, u(rng));
  return t;
}

Tensor distinct_tensor(const Dims& shape, std::mt19937_64& rng) {
  Tensor t = Tensor::zeros(DType::kF64, shape);
  std::vector<int64_t> order(t.data.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const double n = static_cast<double>(std::max<size_t>(order.size(), 1));
  for (size_t i = 0; i < order.size(); ++i) t.data[i] = -1.0 + 2.0 * static_cast<double>(order[i]) / n;
  return t;
}

Tensor integer_tensor(const Dims& shape, std::mt19937_64& rng, int lo, int hi) {
  Tensor t = Tensor::zeros(DType::kF64, shape);
  std::uniform_int_distribution<int> u(lo, hi);
  for (double& v : t.data) v = u(rng);
  return t;
}

double dot(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  double s = 0.0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

Tensor numeric_gradient(const std::function<double(const Tensor&)>& loss, const Tensor& x, double h) {
  Tensor g = Tensor::zeros(DType::kF64, x.shape);
  Tensor probe = x;
  for (size_t i = 0; i < x.data.size(); ++i) {
    probe.data[i] = x.data[i] + h;
    const double up = loss(probe);
    probe.data[i] = x.data[i] - h;
    const double down = loss(probe);
    probe.data[i] = x.data[i];
    g.data[i] = (up - down) / (2.0 * h);
  }
  return g;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  double m = 0.0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) {
    const double d = std::abs(a.data[i] - b.data[i]);
    if (std::isnan(d)) return d;
    m = std::max(m, d);
  }
  return m;
}

double max_abs(const Tensor& a) {
  double m = 0.0;
  for (double v : a.data) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace kc::test
