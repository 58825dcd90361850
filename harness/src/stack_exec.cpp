// run_stack(): the checkpoint schedule (stack_schedule.h) on host tensors through a
// backend's per-layer calls, or the backend's own resident run; make_stack_inputs();
// stack_supports().
#include "kc/stack_exec.h"

#include <cmath>
#include <optional>

#include "kc/fill.h"
#include "kc/invoke.h"
#include "kc/stack_schedule.h"

namespace kc {
namespace {

constexpr uint64_t kStreamX = 1, kStreamDy = 4, kStreamLayer = 1000;

void uniform_fill(Tensor& t, uint64_t seed, uint64_t stream, double scale, bool normal) {
  for (int64_t i = 0; i < t.size(); ++i) {
    if (normal) {  // Box-Muller from two counter-based uniforms
      const double u1 = 1.0 - uniform01(seed, stream, 2 * static_cast<uint64_t>(i));
      const double u2 = uniform01(seed, stream, 2 * static_cast<uint64_t>(i) + 1);
      t[i] = scale * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    } else {
      t[i] = scale * (2.0 * uniform01(seed, stream, static_cast<uint64_t>(i)) - 1.0);
    }
  }
}

Status named(size_t l, const char* call, const Status& s) { return at_stack_layer(l, s.with_context(call)); }

}  // namespace

HostStackRuntime::HostStackRuntime(Backend& be, const std::vector<StackLayer>& layers, const StackInputs& in,
                                   const StackRunOptions& opt, StackRun& run)
    : be_(be), layers_(layers), in_(in), opt_(opt), run_(run) {
  if (opt.backward) {
    run_.dw.resize(layers_.size());
    run_.db.resize(layers_.size());
    if (opt_.keep_conv_grads) run_.conv_grads.resize(layers_.size());
  }
}

void HostStackRuntime::output(size_t, const Tensor& y) {
  if (opt_.keep_activations) run_.activations.push_back(y);
}

Status HostStackRuntime::forward(size_t l, const Tensor& x, Tensor& y, std::optional<IndexTensor>* keep) {
  const StackLayer& L = layers_[l];
  Tensor z = poisoned(opt_.dtype, L.conv.y_shape());
  KC_RETURN_IF_ERROR(named(l, "conv_forward", be_.conv_forward(L.conv, x, in_.w[l], bias(l), L.relu, z)));
  z.round_to_dtype(opt_.dtype);
  if (!L.pool) {
    y = std::move(z);
    return ok_status();
  }
  const Dims ys = L.pool->y_shape();
  y = poisoned(opt_.dtype, ys);
  std::optional<IndexTensor> scratch;  // the Backend interface always asks for them
  std::optional<IndexTensor>& indices = keep ? *keep : scratch;
  indices = IndexTensor{ys, HostVector<int64_t>(static_cast<size_t>(element_count(ys)), kPoisonIndex)};
  KC_RETURN_IF_ERROR(named(l, "maxpool_forward", be_.maxpool_forward(*L.pool, z, y, &*indices)));
  y.round_to_dtype(opt_.dtype);
  return ok_status();
}

Status HostStackRuntime::backward(size_t l, const Tensor& x, const IndexTensor* argmax, const Tensor& dy,
                                  Tensor& dx) {
  const StackLayer& L = layers_[l];
  Tensor dz;
  if (L.pool) {
    dz = poisoned(opt_.dtype, L.conv.y_shape());
    KC_RETURN_IF_ERROR(named(l, "maxpool_backward", be_.maxpool_backward(*L.pool, dy, argmax, dz)));
    dz.round_to_dtype(opt_.dtype);
  }
  dx = poisoned(opt_.dtype, L.conv.x_shape());
  Tensor dw = poisoned(opt_.dtype, L.conv.w_shape());
  Tensor db = L.conv.bias ? poisoned(opt_.dtype, L.conv.b_shape()) : Tensor{};
  KC_RETURN_IF_ERROR(named(l, "conv_backward",
                           be_.conv_backward(L.conv, x, in_.w[l], bias(l), L.relu, L.pool ? dz : dy, dx, dw,
                                             L.conv.bias ? &db : nullptr)));
  for (Tensor* t : {&dx, &dw, &db}) t->round_to_dtype(opt_.dtype);
  if (opt_.keep_conv_grads) run_.conv_grads[l] = L.pool ? dz : dy;
  run_.dw[l] = std::move(dw);
  if (L.user_bias) run_.db[l] = std::move(db);
  return ok_status();
}

const Tensor* HostStackRuntime::bias(size_t l) const { return layers_[l].conv.bias ? &in_.b[l] : nullptr; }

StatusOr<StackInputs> make_stack_inputs(const Case& c, const std::vector<StackLayer>& layers) {
  if (layers.empty()) return invalid_argument("op: not a stack case, or a stack without layers");
  const bool normal = c.data.fill == Fill::kNormal;
  StackInputs in;
  in.x = Tensor::zeros(c.dtype, layers.front().in_shape());
  uniform_fill(in.x, c.data.seed, kStreamX, 1.0, normal);
  in.dy = Tensor::zeros(c.dtype, layers.back().out_shape());
  uniform_fill(in.dy, c.data.seed, kStreamDy, 1.0, normal);
  for (size_t l = 0; l < layers.size(); ++l) {
    const StackLayer& L = layers[l];
    const double fan_in = static_cast<double>(L.conv.reduction_length());
    const double scale = std::sqrt(3.0 * (L.relu ? 2.0 : 1.0) / fan_in);  // uniform: var = scale^2 / 3
    Tensor w = Tensor::zeros(c.dtype, L.conv.w_shape());
    uniform_fill(w, c.data.seed, kStreamLayer + 2 * l, scale, false);
    Tensor b = L.conv.bias ? Tensor::zeros(c.dtype, L.conv.b_shape()) : Tensor{};
    if (L.user_bias) uniform_fill(b, c.data.seed, kStreamLayer + 2 * l + 1, 0.1, false);
    in.w.push_back(std::move(w));
    in.b.push_back(std::move(b));
  }
  for (Tensor* t : {&in.x, &in.dy}) t->round_to_dtype(c.dtype);
  for (size_t l = 0; l < layers.size(); ++l) {
    in.w[l].round_to_dtype(c.dtype);
    in.b[l].round_to_dtype(c.dtype);
  }
  return in;
}

StackRun run_stack(Backend& backend, const std::vector<StackLayer>& layers, const StackInputs& in,
                   const StackRunOptions& options) {
  if (auto* resident = dynamic_cast<ResidentStackRunner*>(&backend)) {
    return resident->run_stack_resident(layers, in, options);
  }
  StackRun run;
  HostStackRuntime rt(backend, layers, in, options, run);
  StackSchedule<HostStackRuntime> schedule(rt, layers, options, run);
  Tensor dx = in.dy;
  run.status = schedule.run(in.x, run.y, dx);
  if (options.backward && run.status.ok()) run.dx = std::move(dx);
  return run;
}

Status stack_supports(const Backend& backend, const std::vector<StackLayer>& layers) {
  for (size_t l = 0; l < layers.size(); ++l) {
    KC_RETURN_IF_ERROR(named(l, "conv", backend.supports(layers[l].conv_case)));
    if (layers[l].pool_case) KC_RETURN_IF_ERROR(named(l, "maxpool", backend.supports(*layers[l].pool_case)));
  }
  return ok_status();
}

}  // namespace kc
