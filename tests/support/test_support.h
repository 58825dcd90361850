// Test helpers: seeded random tensors, inner products and central finite differences
// in f64, shared by the reference proofs and the harness tests.
#pragma once

#include <cstdint>
#include <functional>
#include <random>

#include "kc/tensor.h"

namespace kc::test {

// Uniform values in [lo, hi), rounded to dtype.
Tensor random_tensor(DType dtype, const Dims& shape, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0);
// Distinct values (a shuffled ramp scaled to [-1, 1)) so that max pooling has no ties
// and every element is at least `gap` away from every other.
Tensor distinct_tensor(const Dims& shape, std::mt19937_64& rng);
// Uniform integers in [lo, hi] as doubles.
Tensor integer_tensor(const Dims& shape, std::mt19937_64& rng, int lo, int hi);

double dot(const Tensor& a, const Tensor& b);

// d loss / d x by central differences (loss(x + h e_i) - loss(x - h e_i)) / 2h for every i.
Tensor numeric_gradient(const std::function<double(const Tensor&)>& loss, const Tensor& x, double h);

// Max |a - b| over elements; shapes must agree (checked with a gtest failure).
double max_abs_diff(const Tensor& a, const Tensor& b);
double max_abs(const Tensor& a);

}  // namespace kc::test
