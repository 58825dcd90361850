// gradient_error_variance(): the propagation written out in stack_noise.h, on the
// reference's f64 convolutions (a variance propagates through w∘w as a value does through w).
#include "stack_noise.h"

#include <cmath>
#include <optional>

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
  std::optional<Tensor> mask;           // 1 where z > 0; relu layers only
  std::optional<IndexTensor> argmax;    // pooled layers only
};

// a_out: the layer's output in the oracle's run; without a pool it is relu(z), whose
// sign pattern is z's, so z is recomputed only for a pooled layer.
Routing routing(const StackLayer& L, const Tensor& a_in, const Tensor& a_out, const Tensor& w, const Tensor* b) {
  Routing r;
  if (!L.relu && !L.pool) return r;
  Tensor z = L.pool ? ref::conv_forward(L.conv, a_in, w, b) : a_out;
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
  }
  return r;
}

void apply_mask(const Routing& r, Tensor& t) {
  if (!r.mask) return;
  for (int64_t i = 0; i < t.size(); ++i) t[i] *= (*r.mask)[i];
}

}  // namespace

GradVariance gradient_error_variance(const StackContext& s, double u) {
  const size_t depth = s.layers.size();
  std::vector<Routing> route(depth);
  std::vector<Tensor> var_in(depth);  // variance of each layer's input activation
  Tensor var = Tensor::zeros(DType::kF64, s.layers.front().in_shape());  // x is exact
  for (size_t l = 0; l < depth; ++l) {
    const StackLayer& L = s.layers[l];
    const Tensor& a_in = l == 0 ? s.in.x : s.ref.activations[l - 1];
    const Tensor* b = L.conv.bias ? &s.in.b[l] : nullptr;
    route[l] = routing(L, a_in, s.ref.activations[l], s.in.w[l], b);
    const Tensor abs_b = b ? absolute(*b) : Tensor{};
    Tensor vz = ref::conv_forward(L.conv, var, squared(s.in.w[l]), nullptr);
    add_local(vz, ref::conv_forward(L.conv, absolute(a_in), absolute(s.in.w[l]), b ? &abs_b : nullptr),
              L.conv.reduction_length() + (b ? 1 : 0), u);
    apply_mask(route[l], vz);
    var_in[l] = std::move(var);
    if (L.pool) {  // y = z[argmax]: its variance is gathered the same way
      var = Tensor::zeros(DType::kF64, L.pool->y_shape());
      const int64_t plane_in = L.pool->spatial.in_count(), plane_out = L.pool->spatial.out_count();
      for (int64_t i = 0; i < var.size(); ++i) var[i] = vz[(i / plane_out) * plane_in + route[l].argmax->data[static_cast<size_t>(i)]];
    } else {
      var = std::move(vz);
    }
  }
  GradVariance v;
  v.dw.resize(depth);
  v.db.resize(depth);
  Tensor var_g = Tensor::zeros(DType::kF64, s.layers.back().out_shape());  // dy is exact
  for (size_t l = depth; l-- > 0;) {
    const StackLayer& L = s.layers[l];
    const ConvGeometry& g = L.conv;
    const Tensor& a_in = l == 0 ? s.in.x : s.ref.activations[l - 1];
    Tensor dz = s.ref.conv_grads[l];  // after the pool's backward, before the relu's
    Tensor vdz = L.pool ? *ref::maxpool_backward(*L.pool, var_g, route[l].argmax) : var_g;
    add_local(vdz, dz, 1, u);  // its storage in the dtype
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
    var_g = ref::conv_backward_data(g, vdz, squared(s.in.w[l]));
    add_local(var_g, ref::conv_backward_data(g, abs_dz, absolute(s.in.w[l])),
              g.out_per_group() * g.spatial.kernel_count(), u);
  }
  v.dx = std::move(var_g);
  return v;
}

}  // namespace kc::checks
