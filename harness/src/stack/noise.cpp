// gradient_error_variance(): the propagation written out in stack_noise.h, on the
// reference's f64 convolutions (a variance propagates through w∘w as a value does through w).
#include "stack/noise.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "checks/window.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"

namespace kc::checks {
namespace {

Tensor squared(const Tensor& t) {
  Tensor s = t;
  for (double& v : s.data) v *= v;
  return s;
}

// v += (u * sqrt(n) * magnitude)², elementwise: a sum's own rounding of n terms.
void add_local(Tensor& v, const Tensor& magnitude, int64_t n, double u) {
  const double s = u * std::sqrt(static_cast<double>(std::max<int64_t>(n, 1)));
  for (int64_t i = 0; i < v.size(); ++i) v[i] += (s * magnitude[i]) * (s * magnitude[i]);
}

void add(Tensor& v, const Tensor& other) {
  for (int64_t i = 0; i < v.size(); ++i) v[i] += other[i];
}

// relu'(z) and the argmax of one layer in the oracle's run, to route variances as its
// values were routed.
struct Routing {
  std::optional<Tensor> mask;         // 1 where z > 0; relu layers only
  std::optional<IndexTensor> argmax;  // pooled layers only
  Tensor pool_in;                     // pooled layers: the pool's input, relu(z) or z (for the gate)
  Tensor z;                           // the conv output before the relu, when asked for (the gate)
};

// a_out: the layer's output in the oracle's run; without a pool it is relu(z), whose
// sign pattern is z's, so z is recomputed only for a pooled layer or when keep_z asks.
Routing routing(const StackLayer& L, const Tensor& a_in, const Tensor& a_out, const Tensor& w, const Tensor* b,
                bool keep_z) {
  Routing r;
  if (!L.relu && !L.pool) return r;
  const bool recompute = L.pool || (keep_z && L.relu);
  Tensor z = recompute ? ref::conv_forward(L.conv, a_in, w, b) : a_out;
  if (keep_z) r.z = z;
  if (L.relu) {
    Tensor m = z;
    for (int64_t i = 0; i < z.size(); ++i) {
      m[i] = z[i] > 0.0 ? 1.0 : 0.0;
      z[i] = z[i] > 0.0 ? z[i] : 0.0;
    }
    r.mask = std::move(m);
  }
  if (L.pool) {
    PoolGeometry g = *L.pool;
    g.mode = PoolMode::kTraining;
    r.argmax = ref::maxpool_forward(g, z).indices;
    r.pool_in = std::move(z);
  }
  return r;
}

void apply_mask(const Routing& r, Tensor& t) {
  if (!r.mask) return;
  for (int64_t i = 0; i < t.size(); ++i) t[i] *= (*r.mask)[i];
}

// How many windows of a pool can share one input position: per dim, those whose starts
// lie within the window's extent.
int64_t windows_per_tap(const PoolGeometry& g) {
  int64_t n = 1;
  for (const DimGeometry& d : g.spatial.dims) n *= std::min(d.kernel, (d.extent() + d.stride - 1) / d.stride);
  return n;
}

// The forward half of the model: every layer's routing and the variance of its input.
// With a gate (unforced_routing), on_layer(l, a_in, routing, vz) sees each layer with a
// relu or a pool, its routing holding z, and vz its variance before the relu mask (an
// error can lift a relu input just below 0 above it).
struct Forward {
  std::vector<Routing> route;
  std::vector<Tensor> var_in;
};

using OnLayer = std::function<void(size_t, const Tensor&, const Routing&, const Tensor&)>;

Forward forward_variance(const StackContext& s, double u, const OnLayer& on_layer = {}) {
  const size_t depth = s.layers.size();
  Forward f;
  f.route.resize(depth);
  f.var_in.resize(depth);
  Tensor var = Tensor::zeros(DType::kF64, s.layers.front().in_shape());  // x is exact
  for (size_t l = 0; l < depth; ++l) {
    const StackLayer& L = s.layers[l];
    const Tensor& a_in = l == 0 ? s.in.x : s.ref.activations[l - 1];
    const Tensor* b = L.conv.bias ? &s.in.b[l] : nullptr;
    f.route[l] = routing(L, a_in, s.ref.activations[l], s.in.w[l], b, static_cast<bool>(on_layer));
    const Tensor abs_b = b ? absolute(*b) : Tensor{};
    Tensor vz = ref::conv_forward(L.conv, var, squared(s.in.w[l]), nullptr);
    add_local(vz, ref::conv_forward(L.conv, absolute(a_in), absolute(s.in.w[l]), b ? &abs_b : nullptr),
              L.conv.reduction_length() + (b ? 1 : 0), u);
    if (on_layer && (L.relu || L.pool)) on_layer(l, a_in, f.route[l], vz);
    f.route[l].z = Tensor{};  // the gate's alone: not held through the backward
    f.route[l].pool_in = Tensor{};
    apply_mask(f.route[l], vz);
    f.var_in[l] = std::move(var);
    if (L.pool) {  // y = z[argmax]: its variance is gathered the same way
      var = Tensor::zeros(DType::kF64, L.pool->y_shape());
      const int64_t plane_in = L.pool->spatial.in_count(), plane_out = L.pool->spatial.out_count();
      for (int64_t i = 0; i < var.size(); ++i) {
        var[i] = vz[(i / plane_out) * plane_in + f.route[l].argmax->data[static_cast<size_t>(i)]];
      }
    } else {
      var = std::move(vz);
    }
  }
  return f;
}

// Whether `gap` (a difference of two values) is more than `sigmas` standard deviations
// of its rounding error (variance `v`); a NaN is not.
bool beyond_rounding(double gap, double v, double sigmas) { return gap > sigmas * std::sqrt(v); }

}  // namespace

std::string unforced_routing(const StackContext& s, double u, double sigmas) {
  std::string why;
  forward_variance(s, u, [&](size_t l, const Tensor& a_in, const Routing& r, const Tensor& vz) {
    if (!why.empty()) return;  // the first layer that has one is enough to name
    const StackLayer& L = s.layers[l];
    const Tensor& z = r.z;
    const std::string layer = "layer " + std::to_string(l + 1) + ": ";
    const std::string within =
        " within " + std::to_string(static_cast<int>(sigmas)) + " standard deviations of rounding of ";
    if (!L.pool) {  // relu only: an input near 0 whose cotangent is not 0 flips its gradient on or off
      int64_t near = 0;
      const Tensor& dz = s.ref.conv_grads[l];
      for (int64_t i = 0; i < z.size(); ++i)
        near += vz[i] > 0.0 && dz[i] != 0.0 && !beyond_rounding(std::fabs(z[i]), vz[i], sigmas);
      if (near > 0)
        why = layer + std::to_string(near) + " of " + std::to_string(z.size()) + " relu inputs lie" + within + "0";
      return;
    }
    // Taps whose every term but the bias is 0 (zero padding, zero activations): any run
    // gives them exactly b, and their gradient reaches neither dx nor dw (db sums the
    // plane), so a tie among them routes nothing apart, whatever the tie rule.
    ConvGeometry g0 = L.conv;
    g0.bias = false;
    const Tensor field = ref::conv_forward(g0, absolute(a_in), absolute(s.in.w[l]), nullptr);
    const PoolGeometry& g = *L.pool;
    const Tensor& p = r.pool_in;
    const int64_t plane_in = g.spatial.in_count(), plane_out = g.spatial.out_count();
    const int64_t planes = p.size() / plane_in;
    int64_t unforced = 0;
    for (int64_t o = 0; o < plane_out; ++o) {
      const std::vector<int64_t> taps = rules::window_taps(g.spatial, unravel(o, g.spatial.out_dims()));
      for (int64_t n = 0; n < planes; ++n) {
        const int64_t base = n * plane_in;
        const int64_t top = base + r.argmax->data[static_cast<size_t>(n * plane_out + o)];
        bool forced = true;
        if (L.relu && !(p[top] > 0.0)) {
          // A window of relu zeros routes its gradient to a masked tap, unless a tap's
          // input could round above 0.
          for (int64_t t : taps)
            forced = forced && (vz[base + t] == 0.0 || beyond_rounding(-z[base + t], vz[base + t], sigmas));
        } else {
          // The maximum must stay above 0 (relu) and above every other tap.
          if (L.relu && vz[top] > 0.0) forced = beyond_rounding(z[top], vz[top], sigmas);
          for (int64_t t : taps) {
            const int64_t q = base + t;
            if (q == top || (field[top] == 0.0 && field[q] == 0.0 && p[q] == p[top])) continue;
            forced = forced && beyond_rounding(p[top] - p[q], vz[top] + vz[q], sigmas);
          }
        }
        unforced += !forced;
      }
    }
    if (unforced > 0) {
      why = layer + std::to_string(unforced) + " of " + std::to_string(planes * plane_out) +
            " max-pool windows hold their maximum" + within + "another tap" + (L.relu ? " or of 0" : "");
    }
  });
  return why;
}

GradVariance gradient_error_variance(const StackContext& s, double u) {
  const size_t depth = s.layers.size();
  Forward f = forward_variance(s, u);
  const std::vector<Routing>& route = f.route;
  std::vector<Tensor>& var_in = f.var_in;
  GradVariance v;
  v.dw.resize(depth);
  v.db.resize(depth);
  Tensor var_g = Tensor::zeros(DType::kF64, s.layers.back().out_shape());  // dy is exact
  Tensor g_ref = s.in.dy;  // the oracle's cotangent of the layer's output (pooled layers)
  for (size_t l = depth; l-- > 0;) {
    const StackLayer& L = s.layers[l];
    const ConvGeometry& g = L.conv;
    const Tensor& a_in = l == 0 ? s.in.x : s.ref.activations[l - 1];
    Tensor dz = s.ref.conv_grads[l];  // after the pool's backward, before the relu's
    Tensor vdz = var_g;
    if (L.pool) {
      // dz sums the cotangents of the windows whose argmax it is: rounding on the
      // magnitude of those terms (they may cancel), then its storage.
      vdz = *ref::maxpool_backward(*L.pool, var_g, route[l].argmax);
      add_local(vdz, *ref::maxpool_backward(*L.pool, absolute(g_ref), route[l].argmax), windows_per_tap(*L.pool) + 1,
                u);
    } else {
      add_local(vdz, dz, 1, u);  // its storage in the dtype
    }
    apply_mask(route[l], vdz);
    apply_mask(route[l], dz);
    const Tensor abs_dz = absolute(dz), abs_a = absolute(a_in);
    const int64_t positions = g.batch * g.spatial.out_count();
    v.dw[l] = ref::conv_backward_weight(g, var_in[l], squared(dz));
    add(v.dw[l], ref::conv_backward_weight(g, squared(a_in), vdz));
    add_local(v.dw[l], ref::conv_backward_weight(g, abs_a, abs_dz), positions, u);
    if (g.bias) {
      v.db[l] = ref::conv_backward_bias(g, vdz);
      add_local(v.db[l], ref::conv_backward_bias(g, abs_dz), positions, u);
    }
    if (l > 0 && s.layers[l - 1].pool) g_ref = ref::conv_backward_data(g, dz, s.in.w[l]);
    var_g = ref::conv_backward_data(g, vdz, squared(s.in.w[l]));
    add_local(var_g, ref::conv_backward_data(g, abs_dz, absolute(s.in.w[l])),
              g.out_per_group() * g.spatial.kernel_count(), u);
  }
  v.dx = std::move(var_g);
  return v;
}

}  // namespace kc::checks
