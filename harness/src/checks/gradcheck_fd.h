// Finite differences for gradcheck (the method: gradcheck.cpp): the oracle's loss and
// outputs at perturbed inputs, Richardson-extrapolated probes that shrink their step
// until it crosses no relu or argmax kink, their error bounds, and the directional path
// for large cases.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "backend/invoke.h"
#include "check_math.h"
#include "checks/checks.h"

namespace kc::checks::fd {

inline constexpr std::array<const char*, 3> kGrad = {"dx", "dw", "db"};
inline constexpr std::array<const char*, 3> kWrt = {"x", "w", "b"};
inline constexpr double kStep = 0x1p-4;  // first step, relative to the tensor's scale

using Params = std::array<Tensor, 3>;  // x, w, b; w and b empty where the op has none

inline const Tensor& grad_of(const OpOutputs& o, int t) { return t == 0 ? o.dx : t == 1 ? o.dw : o.db; }

// The scale steps are taken relative to. Below 2^-900 (all zero, or subnormal data) it
// is 1: the smallest step, scale * kStep * kStepFloor, must stay a normal number, or the
// step underflows to 0 and every difference quotient is 0/0.
double scale_of(const Tensor& t);

// Row j of the Jacobian: the backward of the backend and of the oracle (values and the
// absolute pass) for the unit cotangent dy = e_j.
struct Row {
  int64_t output = 0;  // j
  OpOutputs cand, ref, abs;
};

struct Problem {
  const CheckContext& ctx;
  Tensor z0;              // conv_bias_relu: the relu's input at the case's inputs
  int aimed = -1;         // the index of the aimed direction, -1 without one
  std::vector<Row> rows;  // the Jacobian's rows, empty when only dy^T J is checked
  // conv_bias_relu on a candidate: what outputs whose relu' is ambiguous may move each
  // gradient by (relu_ambiguity.h), and how many there are; empty tensors without any.
  Params slack;
  int64_t ambiguous = 0;
  // conv_bias_relu: outputs left out of the differenced loss (and of the Jacobian's
  // rows): those at the relu's kink (z exactly 0, where no step is differentiable) and
  // the ambiguous ones. A right backward gives the kink's outputs nothing (relu'(0) = 0
  // on sums that are exact, else they are ambiguous and allowed for in `slack`), so
  // the rest of the loss still has the backend's gradient; empty: none left out.
  std::vector<bool> left_out;
  // Max pool: for every element of x, the first element of its group of tied maxima
  // (tie_groups); empty when no window's maximum is held twice.
  std::vector<int64_t> tie_group;
};

struct Probe {
  bool kink = true;
  double h = 0.0, d = 0.0, d_half = 0.0, value = 0.0;
  std::vector<double> row_d, row_d_half;  // with rows: D(h) and D(h/2) of every y_j
  // Bounds on the f64 rounding of one loss, and (with rows) of each y_j, at any input
  // the probe evaluated: from the absolute pass at the step's envelope |inputs| + h|u|.
  double loss_error = 0.0;
  std::vector<double> output_error;
};

// The Richardson-extrapolated central difference of the loss (and with rows, of every
// output) along at(s) = inputs + s*u; kink when no usable step was found.
Probe probe(const Problem& p, const std::function<Params(double)>& at, double h);

// The difference's own error: the losses' rounding over the step plus the truncation estimate.
double difference_error(const Probe& r);

// The problem of a check context, without rows (gradcheck.cpp adds them).
Problem make_problem(const CheckContext& ctx);

// Max pool: elements of x that hold the maximum of a common window, joined across
// windows (a ~ b in one window, b ~ c in another: one group), each mapped to the
// group's first element; empty when there are none. A step that moves one of them
// alone changes an argmax, so no probe could difference it; moved together by the
// same amount, they stay tied, every argmax stays where it is, and the loss is
// differentiable along that step. The gradient probed is then their sum: which of
// them a window routes its dy to is the argmax check's to judge, not gradcheck's.
// Windows whose maximum is NaN or -inf are left alone (a step does not move them).
std::vector<int64_t> tie_groups(const PoolGeometry& g, const Tensor& x);

// The elements of tensor t that a probe moves together: x's tie groups, else one each.
std::vector<std::vector<int64_t>> probe_units(const Problem& p, int t, int64_t size);

struct Outcome {
  Tally tally;
  int64_t probes = 0, kinks = 0;
  int64_t row_failures = 0;        // of them in the Jacobian's rows
  std::vector<std::string> notes;  // which tensors disagree
};

// v^T J u along `count` directions (the aimed one included when p.aimed >= 0).
void directional(const Problem& p, int count, Outcome& out);

// The aimed direction needs a candidate whose gradients differ from the oracle's somewhere.
bool aimed_direction_applies(const CheckContext& ctx);

}  // namespace kc::checks::fd
