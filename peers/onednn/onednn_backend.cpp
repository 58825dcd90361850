// The three oneDNN peers behind the Backend interface. Plans (primitive descriptors) are
// made once per problem and kept, as a framework keeps them; oneDNN's own primitive
// cache keeps the compiled kernels. Every call is guarded: a dnnl::error becomes a Status.
// For `kcheck bench`, prepare() makes an op's primitives and memories of its own
// (prepare_case.h) and the GEMM ceilings are measured once for the three (gemm_ceilings.h).
#include <map>
#include <optional>
#include <sstream>

#include "gemm_ceilings.h"
#include "kc/onednn/backends.h"
#include "onednn_conv.h"
#include "onednn_memory.h"
#include "onednn_pool.h"
#include "onednn_status.h"
#include "onednn_supports.h"
#include "prepare_case.h"

namespace kc::onednn {
namespace {

std::string conv_key(const ConvGeometry& g, DType t, bool relu) {
  std::ostringstream k;
  k << dtype_name(t) << relu << g.bias << ':' << g.batch << ',' << g.in_channels << ',' << g.out_channels << ','
    << g.groups;
  for (const DimGeometry& d : g.spatial.dims)
    k << ';' << d.in << ',' << d.kernel << ',' << d.stride << ',' << d.dilation << ',' << d.pad_lo << ',' << d.pad_hi;
  return k.str();
}

std::string pool_key(const PoolGeometry& g, DType t, bool training) {
  std::ostringstream k;
  k << dtype_name(t) << training << ':' << g.batch << ',' << g.channels;
  for (const DimGeometry& d : g.spatial.dims) {
    k << ';' << d.in << ',' << d.kernel << ',' << d.stride << ',' << d.dilation << ',' << d.pad_lo << ',' << d.pad_hi
      << ',' << d.out;
  }
  return k.str();
}

std::string avgpool_key(const AvgPoolGeometry& g, DType t) {
  std::ostringstream k;
  k << dtype_name(t) << g.count_include_pad << ':' << g.batch << ',' << g.channels;
  for (const DimGeometry& d : g.spatial.dims)
    k << ';' << d.in << ',' << d.kernel << ',' << d.stride << ',' << d.pad_lo << ',' << d.pad_hi << ',' << d.out;
  return k.str();
}

Status no_f64(DType t) {
  return data_type(t) ? ok_status() : unimplemented("f64 storage: oneDNN has no f64 convolution or pooling");
}

class OnednnBackend final : public Backend {
 public:
  OnednnBackend(std::string name, Flavor flavor) : name_(std::move(name)), flavor_(flavor) {}
  std::string name() const override { return name_; }
  Status available() const override;
  Status supports(const Case& c) const override;
  Numerics numerics() const override;

  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    return guarded("convolution forward", [&] {
      KC_ASSIGN_OR_RETURN(const ConvPlan* plan, conv_plan(g, x.dtype, relu));
      run_conv_forward(*ctx_, *plan, x, w, b, relu, y);
      return ok_status();
    });
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    return guarded("convolution backward", [&] {
      KC_ASSIGN_OR_RETURN(const ConvPlan* plan, conv_plan(g, x.dtype, relu));
      run_conv_backward(*ctx_, *plan, x, w, b, relu, dy, dx, dw, db);
      return ok_status();
    });
  }
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    return guarded("max pooling forward", [&] {
      KC_ASSIGN_OR_RETURN(const PoolPlan* plan, pool_plan(g, x.dtype, indices != nullptr));
      run_pool_forward(*ctx_, *plan, g, x, y, indices);
      return ok_status();
    });
  }
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    if (indices == nullptr) {
      return failed_precondition(
          "max-pool backward without indices: oneDNN's backward routes dy by the forward's workspace (its argmax), "
          "so there is nothing to route by");
    }
    return guarded("max pooling backward", [&] {
      KC_ASSIGN_OR_RETURN(const PoolPlan* plan, pool_plan(g, dy.dtype, true));
      return run_pool_backward(*ctx_, *plan, g, dy, *indices, dx);
    });
  }

  // The host calls refuse the contract gap too (supports() refuses it first): a call
  // never returns oneDNN's average where it is not the contract's.
  Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) override {
    KC_RETURN_IF_ERROR(avgpool_contract_gap(g));
    return guarded("average pooling forward", [&] {
      KC_ASSIGN_OR_RETURN(const AvgPoolPlan* plan, avgpool_plan(g, x.dtype));
      run_avgpool_forward(*ctx_, *plan, x, y);
      return ok_status();
    });
  }
  Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) override {
    KC_RETURN_IF_ERROR(avgpool_contract_gap(g));
    return guarded("average pooling backward", [&] {
      KC_ASSIGN_OR_RETURN(const AvgPoolPlan* plan, avgpool_plan(g, dy.dtype));
      run_avgpool_backward(*ctx_, *plan, dy, dx);
      return ok_status();
    });
  }

  StatusOr<std::unique_ptr<PreparedOp>> prepare(const Case& c, BenchOp op, const OpInputs& in,
                                                const PrepareOptions& options) override {
    if (!options.deterministic) {
      return unimplemented(
          "non-deterministic: oneDNN's CPU primitives are deterministic, there is no faster variant with float "
          "atomics to time");
    }
    KC_RETURN_IF_ERROR(supports(c));
    return prepare_case(c, flavor_, op, in);
  }
  StatusOr<std::vector<Ceiling>> measure_ceilings() override { return gemm_ceilings(); }

 private:
  Status ready() {
    if (!ctx_) ctx_.emplace();  // may throw dnnl::error: callers are guarded
    return ok_status();
  }
  StatusOr<const ConvPlan*> conv_plan(const ConvGeometry& g, DType t, bool relu) {
    KC_RETURN_IF_ERROR(no_f64(t));
    KC_RETURN_IF_ERROR(ready());
    const std::string key = conv_key(g, t, relu);
    auto it = conv_plans_.find(key);
    if (it == conv_plans_.end())
      it = conv_plans_.emplace(key, make_conv_plan(ctx_->engine, g, *data_type(t), flavor_, relu)).first;
    return &it->second;
  }
  StatusOr<const PoolPlan*> pool_plan(const PoolGeometry& g, DType t, bool training) {
    KC_RETURN_IF_ERROR(no_f64(t));
    KC_RETURN_IF_ERROR(ready());
    const std::string key = pool_key(g, t, training);
    auto it = pool_plans_.find(key);
    if (it == pool_plans_.end())
      it = pool_plans_.emplace(key, make_pool_plan(ctx_->engine, g, *data_type(t), pool_flavor(flavor_), training))
               .first;
    return &it->second;
  }

  StatusOr<const AvgPoolPlan*> avgpool_plan(const AvgPoolGeometry& g, DType t) {
    KC_RETURN_IF_ERROR(no_f64(t));
    KC_RETURN_IF_ERROR(ready());
    const std::string key = avgpool_key(g, t);
    auto it = avgpool_plans_.find(key);
    if (it == avgpool_plans_.end())
      it = avgpool_plans_.emplace(key, make_avgpool_plan(ctx_->engine, g, *data_type(t), pool_flavor(flavor_))).first;
    return &it->second;
  }

  std::string name_;
  Flavor flavor_;
  std::optional<Context> ctx_;
  std::map<std::string, ConvPlan> conv_plans_;
  std::map<std::string, PoolPlan> pool_plans_;
  std::map<std::string, AvgPoolPlan> avgpool_plans_;
};

// A 3x3 stride-1 f32 convolution that oneDNN runs as Winograd wherever it has Winograd.
Status winograd_offered(const dnnl::engine& engine) {
  ConvGeometry g;
  g.in_channels = g.out_channels = 16;
  g.spatial.dims.assign(2, DimGeometry{12, 3, 1, 1, 1, 1, 12});
  return guarded("Winograd", [&] {
    (void)make_conv_plan(engine, g, memory::data_type::f32, Flavor::kWinograd, false);
    return ok_status();
  });
}

Status OnednnBackend::available() const {
  return guarded("engine", [&] {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    if (flavor_ != Flavor::kWinograd) return ok_status();
    const Status s = winograd_offered(engine);
    if (s.ok()) return s;
    return unavailable(library_version() + " offers no Winograd convolution on this CPU (" + s.message() + ")");
  });
}

Status OnednnBackend::supports(const Case& c) const {
  return guarded("supports", [&] { return onednn_supports(c, flavor_, dnnl::engine(dnnl::engine::kind::cpu, 0)); });
}

Numerics OnednnBackend::numerics() const {
  Numerics n;
  n.accumulation = DType::kF32;
  if (flavor_ == Flavor::kWinograd) {
    n.algorithm = Algorithm::kWinograd;  // jit_wino_4x3: F(4, 3)
    n.transform_m = 4;
    n.transform_r = 3;
  }
  n.flushes_subnormals = true;  // f32 -> bf16 conversions flush subnormals
  n.skips_padding_taps = true;  // the jit backward-weights kernels skip zero-padding taps
  n.relu_nan_grad = ReluNanGrad::kPassDy;
  return n;
}

}  // namespace

std::unique_ptr<Backend> make_onednn_backend() { return std::make_unique<OnednnBackend>("onednn", Flavor::kAny); }
std::unique_ptr<Backend> make_onednn_plain_backend() {
  return std::make_unique<OnednnBackend>("onednn.plain", Flavor::kPlain);
}
std::unique_ptr<Backend> make_onednn_winograd_backend() {
  return std::make_unique<OnednnBackend>("onednn.winograd", Flavor::kWinograd);
}

std::string library_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

}  // namespace kc::onednn
