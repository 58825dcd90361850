// run_stack(): the checkpoint schedule (stack_schedule.h) on host tensors through a
// backend's per-layer calls, or the backend's own resident run; make_stack_inputs();
// stack_supports().
#include "stack/stack_exec.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/candidate_call.h"
#include "backend/invoke.h"
#include "core/fill.h"
#include "stack/stack_schedule.h"

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

Status named(size_t l, const std::string& call, const Status& s) { return at_stack_layer(l, s.with_context(call)); }

}  // namespace

// The calling contract of backend.h (integrity's rules, docs/checks.md, "Notes on individual checks") on one layer's
// call, which the single-op `integrity` check cannot see inside a stack: every output
// written into the buffer handed over (the same storage and size, no poison left, its
// guard bands intact) and every input unchanged (its digest, its guard bands). The first
// breach fails the stack run, named by layer, call and buffer, as a damaged guard band
// of a device buffer fails the cuda backend's resident run.
class CallAudit {
 public:
  void input(const char* name, const Tensor& t) { ins_.push_back({name, &t, nullptr, digest(t.data)}); }
  // An input whose digest the caller has just taken.
  void input(const char* name, const Tensor& t, uint64_t known) { ins_.push_back({name, &t, nullptr, known}); }
  void input(const char* name, const IndexTensor& t) { ins_.push_back({name, nullptr, &t, digest(t.data)}); }
  void output(const char* name, const Tensor& t) { outs_.push_back({name, &t, nullptr, t.data.data(), t.size()}); }
  void output(const char* name, const IndexTensor& t) {
    outs_.push_back({name, nullptr, &t, t.data.data(), static_cast<int64_t>(t.data.size())});
  }

  Status verdict() const {
    for (const Out& o : outs_) {
      const void* now = o.t ? static_cast<const void*>(o.t->data.data()) : o.idx->data.data();
      const int64_t size = o.t ? o.t->size() : static_cast<int64_t>(o.idx->data.size());
      if (now != o.handed || size != o.size) {
        return breach(o.name, "the backend replaced or resized the buffer it was given (" + std::to_string(o.size) +
                                  " elements, now " + std::to_string(size) + "): write into the buffer handed over");
      }
      const GuardDamage d = o.t ? guard_damage(o.t->data) : guard_damage(o.idx->data);
      if (!d.intact()) {
        return breach(o.name, o.t ? describe_guard_damage(o.t->data, d) : describe_guard_damage(o.idx->data, d));
      }
      int64_t unwritten = 0, first = -1;
      for (int64_t i = 0; i < size; ++i) {
        const bool poison = o.t ? is_poison((*o.t)[i]) : o.idx->data[static_cast<size_t>(i)] == kPoisonIndex;
        if (poison && unwritten++ == 0) first = i;
      }
      if (unwritten > 0) {
        return breach(o.name, std::to_string(unwritten) + " of " + std::to_string(size) +
                                  " elements never written (still the poison), the first at flat index " +
                                  std::to_string(first));
      }
    }
    for (const In& in : ins_) {
      const GuardDamage d = in.t ? guard_damage(in.t->data) : guard_damage(in.idx->data);
      if (!d.intact()) {
        return breach(in.name, in.t ? describe_guard_damage(in.t->data, d) : describe_guard_damage(in.idx->data, d));
      }
      if ((in.t ? digest(in.t->data) : digest(in.idx->data)) != in.digest) {
        return breach(in.name, "the backend wrote into this input (inputs are const)");
      }
    }
    return ok_status();
  }

 private:
  static Status breach(const char* buffer, const std::string& what) {
    return failed_precondition(std::string(buffer) + ": " + what);
  }
  struct In {
    const char* name;
    const Tensor* t;
    const IndexTensor* idx;
    uint64_t digest;
  };
  struct Out {
    const char* name;
    const Tensor* t;
    const IndexTensor* idx;
    const void* handed;
    int64_t size;
  };
  std::vector<In> ins_;
  std::vector<Out> outs_;
};

namespace {

// One backend call under a CallAudit: the call's own error first, then the audit's.
template <class Call>
Status audited(const Backend& be, size_t l, const char* call, CallAudit& audit, Call&& run) {
  KC_RETURN_IF_ERROR(named(l, call, candidate_call(be, call, std::forward<Call>(run))));
  return named(l, call, audit.verdict());
}

}  // namespace

HostStackRuntime::HostStackRuntime(Backend& be, const std::vector<StackLayer>& layers, const StackInputs& in,
                                   const StackRunOptions& opt, StackRun& run)
    : be_(be), layers_(layers), in_(in), opt_(opt), run_(run) {
  for (size_t l = 0; l < layers_.size(); ++l) {
    w_print_.push_back(digest(in_.w[l].data));
    b_print_.push_back(bias(l) ? digest(bias(l)->data) : 0);
  }
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
  CallAudit conv;
  KC_RETURN_IF_ERROR(conv_inputs(l, x, "conv_forward", conv));
  conv.output("y", z);
  KC_RETURN_IF_ERROR(
      audited(be_, l, "conv_forward", conv, [&] { return be_.conv_forward(L.conv, x, in_.w[l], bias(l), L.relu, z); }));
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
  CallAudit pool;
  pool.input("x", z);
  pool.output("y", y);
  pool.output("indices", *indices);
  KC_RETURN_IF_ERROR(
      audited(be_, l, "maxpool_forward", pool, [&] { return be_.maxpool_forward(*L.pool, z, y, &*indices); }));
  y.round_to_dtype(opt_.dtype);
  return ok_status();
}

Status HostStackRuntime::backward(size_t l, const Tensor& x, const IndexTensor* argmax, const Tensor& dy, Tensor& dx) {
  const StackLayer& L = layers_[l];
  Tensor dz;
  if (L.pool) {
    dz = poisoned(opt_.dtype, L.conv.y_shape());
    CallAudit pool;
    pool.input("dy", dy);
    if (argmax != nullptr) pool.input("indices", *argmax);
    pool.output("dx", dz);
    KC_RETURN_IF_ERROR(
        audited(be_, l, "maxpool_backward", pool, [&] { return be_.maxpool_backward(*L.pool, dy, argmax, dz); }));
    dz.round_to_dtype(opt_.dtype);
  }
  dx = poisoned(opt_.dtype, L.conv.x_shape());
  Tensor dw = poisoned(opt_.dtype, L.conv.w_shape());
  Tensor db = L.conv.bias ? poisoned(opt_.dtype, L.conv.b_shape()) : Tensor{};
  const Tensor& g = L.pool ? dz : dy;
  CallAudit conv;
  KC_RETURN_IF_ERROR(conv_inputs(l, x, "conv_backward", conv));
  conv.input("dy", g);
  conv.output("dx", dx);
  conv.output("dw", dw);
  if (L.conv.bias) conv.output("db", db);
  KC_RETURN_IF_ERROR(audited(be_, l, "conv_backward", conv, [&] {
    return be_.conv_backward(L.conv, x, in_.w[l], bias(l), L.relu, g, dx, dw, L.conv.bias ? &db : nullptr);
  }));
  for (Tensor* t : {&dx, &dw, &db}) t->round_to_dtype(opt_.dtype);
  if (opt_.keep_conv_grads) run_.conv_grads[l] = g;
  run_.dw[l] = std::move(dw);
  if (L.user_bias) run_.db[l] = std::move(db);
  return ok_status();
}

// Layer l's conv call's inputs x, w and b into `audit`, once w and b are known to be
// what the run began with (their digests are then the audit's too).
Status HostStackRuntime::conv_inputs(size_t l, const Tensor& x, const char* call, CallAudit& audit) const {
  KC_RETURN_IF_ERROR(parameters_unchanged(l, std::string("before its ") + call + " read them"));
  audit.input("x", x);
  audit.input("w", in_.w[l], w_print_[l]);
  if (bias(l)) audit.input("b", *bias(l), b_print_[l]);
  return ok_status();
}

// Layer l's w and b are handed (const) only to layer l's calls, which the CallAudit
// holds to that; a call of another layer that writes into them is seen here.
Status HostStackRuntime::parameters_unchanged(size_t l, const std::string& when) const {
  const char* what = digest(in_.w[l].data) != w_print_[l]              ? "weights (w)"
                     : bias(l) && digest(bias(l)->data) != b_print_[l] ? "bias (b)"
                                                                       : nullptr;
  if (what == nullptr) return ok_status();
  return at_stack_layer(
      l, failed_precondition(
             std::string("its ") + what + " changed during the run, " + when +
             ", and no call was handed them to write: a call "
             "wrote into a buffer it was not handed (a layer's parameters are read-only for the whole step)"));
}

Status HostStackRuntime::parameters_intact() const {
  for (size_t l = 0; l < layers_.size(); ++l) KC_RETURN_IF_ERROR(parameters_unchanged(l, "after their last use"));
  return ok_status();
}

uint64_t HostStackRuntime::fingerprint(const Tensor& t) const { return digest(t.data); }
uint64_t HostStackRuntime::fingerprint(const IndexTensor& t) const { return digest(t.data); }

static_assert(FingerprintingRuntime<HostStackRuntime>);

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
  if (run.status.ok()) run.status = rt.parameters_intact();
  if (options.backward && run.status.ok()) run.dx = std::move(dx);
  return run;
}

Status stack_supports(const Backend& backend, const std::vector<StackLayer>& layers) {
  for (size_t l = 0; l < layers.size(); ++l) {
    KC_RETURN_IF_ERROR(named(l, std::string(ConvParams::kName), backend.supports(layers[l].conv_case)));
    if (layers[l].pool_case) {
      KC_RETURN_IF_ERROR(named(l, std::string(MaxPoolParams::kName), backend.supports(*layers[l].pool_case)));
    }
  }
  return ok_status();
}

}  // namespace kc
