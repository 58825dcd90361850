// The `cudnn` engine: the peer that our kernels are compared and timed against.
//   conv forward:  bias broadcast into y (cudnnAddTensor), + cuDNN convolution (beta = 1:
//                  one rounding of conv + bias), + relu (fused op)
//   conv backward: [fused: z recomputed, dz = relu'(z) dy by cudnnActivationBackward]
//                  backward-data, backward-filter, backward-bias (each also alone, for
//                  the bench's split ops of an unfused conv)
//   max pool:      inference forward only (cuDNN keeps no argmax indices; its backward
//                  needs x and y, which the backend interface does not pass)
//   average pool:  cudnnPoolingForward / cudnnPoolingBackward, COUNT_INCLUDE_PADDING or
//                  COUNT_EXCLUDE_PADDING; cuDNN's own symmetric padding, or (counting the
//                  padding) x pre-padded with zeros and dx cropped from the padded
//                  gradient. Refused: a divisor, asymmetric padding that is not counted,
//                  and a ceil_mode output longer than floor's (cuDNN has no ceil mode)
// More on the method: docs/notes.md, section peers/cudnn/cudnn_engine.cpp.
#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "cudnn_avgpool_rules.h"
#include "cudnn_conv.h"
#include "cudnn_desc.h"
#include "engine.h"
#include "kc/gpu/device.h"
#include "kc/gpu/host_convert.h"
#include "kc/shape.h"

namespace kc::gpu {
namespace {

const float kOne = 1.0f, kZero = 0.0f;

// An input as cuDNN reads it: x itself with cuDNN's own padding, or a pre-padded copy.
struct Input {
  const void* x = nullptr;
  std::vector<int> spatial;  // cuDNN order
  std::vector<int> pad;      // cuDNN order; zeros when pre-padded
  bool prepadded = false;
  std::vector<int> lo;  // the interior's offset per dim (pre-padded), cuDNN order
};

std::vector<int> padded_extents(const SpatialGeometry& s, std::vector<int64_t> hi_extra) {
  std::vector<int64_t> p;
  for (size_t i = 0; i < s.dims.size(); ++i) p.push_back(s.dims[i].padded() + hi_extra[i]);
  return cudnn_spatial(p, 1);
}

class CudnnEngine final : public Engine {
 public:
  ~CudnnEngine() override {
    if (handle_ != nullptr) api_->cudnnDestroy(handle_);
  }
  std::string name() const override { return "cudnn"; }
  Status available() const override {
    auto d = probe_device();
    if (!d.ok()) return d.status();
    auto a = cudnn_api();
    return a.ok() ? ok_status() : a.status();
  }
  Status supports(const Case& c) const override;
  Status conv_forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) override;
  Status conv_backward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) override;
  Status pool_forward(const PoolGeometry& g, DType dtype, const PoolIO& io) override;
  Status pool_backward(const PoolGeometry&, DType, const PoolIO&) override {
    return unimplemented(
        "cudnn max-pool backward: cuDNN recomputes the argmax from x and y, which the backend "
        "interface does not pass (the peer runs inference pooling only)");
  }
  Status avgpool_forward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io) override;
  Status avgpool_backward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io) override;
  Status conv_backward_data(const ConvGeometry& g, DType dtype, const ConvIO& io) override;
  Status conv_backward_weight(const ConvGeometry& g, DType dtype, const ConvIO& io) override;
  Status conv_backward_bias(const ConvGeometry& g, DType dtype, const ConvIO& io) override;
  Status bind_stream(void* stream) override {
    KC_RETURN_IF_ERROR(ready());
    return cudnn_status(*api_, api_->cudnnSetStream(handle_, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
  }
  std::string algorithm() const override;
  // deterministic: false admits cuDNN's non-deterministic algorithms (atomics).
  bool has_atomic_weight_gradient() const override { return true; }
  int64_t scratch_bytes() const override {
    int64_t n = 0;
    for (const DeviceBuffer* b : {&workspace_, &xp_, &dxp_, &z_, &r_, &dz_, &zeros_}) n += b->bytes();
    return n;
  }
  Status check_guards() const override {
    for (const DeviceBuffer* b : {&workspace_, &xp_, &dxp_, &z_, &r_, &dz_, &zeros_}) {
      KC_RETURN_IF_ERROR(b->check_guards());
    }
    return ok_status();
  }
  void release_scratch() override {
    for (DeviceBuffer* b : {&workspace_, &xp_, &dxp_, &z_, &r_, &dz_, &zeros_}) *b = DeviceBuffer{};
    zeros_filled_ = 0;
  }

 private:
  Status ready();
  CudnnCall call(DType dtype) {
    return CudnnCall{*api_, handle_, dtype, deterministic(), workspace_, chosen_, find_algorithms()};
  }
  // The problem's input and descriptors, made once per problem.
  struct Problem {
    Input in;
    const ConvDescs* d = nullptr;
  };
  StatusOr<Problem> problem(const ConvGeometry& g, DType dtype, const void* x);
  Status data_grad(const ConvGeometry& g, DType dtype, const Problem& p, const void* dy, const void* w, void* dx);
  // Copies x into the interior of a buffer filled with `fill` (cuDNN order extents).
  Status prepad(DType dtype, int n, int c, const std::vector<int>& in, const std::vector<int>& padded,
                const std::vector<int>& lo, const TypedValue& fill, const void* x, DeviceBuffer& out);
  // The interior view of a padded tensor: descriptor and pointer.
  StatusOr<TensorDesc> interior(DType dtype, int n, int c, const std::vector<int>& in, const std::vector<int>& padded,
                                const std::vector<int>& lo, int64_t* offset_bytes);
  StatusOr<Input> conv_input(const ConvGeometry& g, DType dtype, const void* x);
  Status conv_plus_bias(DType dtype, const ConvDescs& d, const void* x, const void* w, const void* b, void* y);
  Status relu_in_place(const ConvDescs& d, void* y);
  Status fused_grad(const ConvGeometry& g, DType dtype, const ConvDescs& d, const Input& in, const ConvIO& io);
  // An average pool's input as cuDNN reads it (pre-padded with zeros into xp_ when x is
  // given and cuDNN's own padding cannot be used), and the pooling descriptor.
  struct AvgProblem {
    Input in;
    PoolDesc pool;
  };
  StatusOr<AvgProblem> avg_problem(const AvgPoolGeometry& g, DType dtype, const void* x);

  const CudnnApi* api_ = nullptr;
  cudnnHandle_t handle_ = nullptr;
  DeviceBuffer workspace_, xp_, dxp_, z_, r_, dz_;
  DeviceBuffer zeros_;        // the x cudnnPoolingBackward takes for an average pool
  int64_t zeros_filled_ = 0;  // its leading bytes that hold zeros
  AlgoCache chosen_;          // the convolution algorithms that ran, per problem
  ConvDescCache descs_;       // the descriptors of each problem, made once
  ActDesc relu_;              // made once, in ready()
};

// Whether the convolution uses cuDNN's own zero padding: symmetric in every dim and not
// all zero (conv_input pre-pads asymmetric padding with real zeros instead). A case whose
// geometry does not resolve counts as padded if its spec may pad at all.
bool cudnn_pads(const Case& c, const ConvParams& conv) {
  const StatusOr<ConvGeometry> g = conv_geometry(c);
  if (!g.ok()) {
    if (conv.padding.kind != PadKind::kExplicit) return conv.padding.kind != PadKind::kValid;
    return std::any_of(conv.padding.pairs.begin(), conv.padding.pairs.end(),
                       [](const auto& pair) { return pair[0] != 0 || pair[1] != 0; });
  }
  bool any = false;
  for (const DimGeometry& d : g->spatial.dims) {
    if (d.pad_lo != d.pad_hi) return false;
    any = any || d.pad_lo > 0;
  }
  return any;
}

bool non_finite_inline(const Case& c, const char* name) {
  const auto it = c.tensors.find(name);
  if (it == c.tensors.end()) return false;
  for (double v : it->second.data) {
    if (!std::isfinite(v)) return true;
  }
  return false;
}

Status CudnnEngine::supports(const Case& c) const {
  KC_RETURN_IF_ERROR(common_supports(c, "cudnn"));
  if (const auto* p = std::get_if<MaxPoolParams>(&c.op)) {
    if (p->mode == PoolMode::kTraining) {
      return unimplemented(
          "training-mode max pooling: cuDNN keeps no argmax indices (the cudnn peer runs "
          "maxpool.mode: inference only)");
    }
    for (int64_t d : p->dilation) {
      if (d != 1) return unimplemented("max pooling with dilation " + std::to_string(d) + ": cuDNN pooling has none");
    }
    return ok_status();
  }
  if (const auto* p = std::get_if<AvgPoolParams>(&c.op)) return avgpool_supports(c, *p);
  const ConvParams* conv = std::get_if<ConvParams>(&c.op);
  if (const auto* fused = std::get_if<ConvBiasReluParams>(&c.op)) conv = &fused->conv;
  if (conv == nullptr) return ok_status();  // a stack: each layer's case is asked on its own
  if (conv->padding_mode != PaddingMode::kZeros) {
    return unimplemented("padding_mode " + std::string(padding_mode_name(conv->padding_mode)) +
                         ": cuDNN pads with zeros only");
  }
  // cuDNN's own zero padding skips the padded taps instead of multiplying by zero: on an
  // H100 (cuDNN 9) the backward filter gave dw = 1*2 + 2*3 = 8 where the contract's
  // 1*2 + 2*3 + NaN*0 is NaN. A NaN or infinity in w (forward) or dy (dw) that meets a
  // padded tap is therefore outside what this peer can be compared on.
  if (cudnn_pads(c, *conv) && (non_finite_inline(c, "w") || non_finite_inline(c, "dy"))) {
    return unimplemented(
        "a NaN or infinity in w or dy with zero padding: cuDNN skips padded taps, where 0 * NaN "
        "is NaN in the contract");
  }
  return ok_status();
}

Status CudnnEngine::ready() {
  KC_RETURN_IF_ERROR(available());
  if (handle_ != nullptr && relu_.get() != nullptr) return ok_status();
  KC_ASSIGN_OR_RETURN(api_, cudnn_api());
  note_cuda_initialised();
  if (handle_ == nullptr) KC_RETURN_IF_ERROR(cudnn_status(*api_, api_->cudnnCreate(&handle_), "cudnnCreate"));
  KC_ASSIGN_OR_RETURN(relu_, make_relu(*api_));
  return ok_status();
}

StatusOr<TensorDesc> CudnnEngine::interior(DType dtype, int n, int c, const std::vector<int>& in,
                                           const std::vector<int>& padded, const std::vector<int>& lo,
                                           int64_t* offset_bytes) {
  const std::vector<int> strides = packed_strides(c, padded);
  int64_t offset = 0;
  for (size_t i = 0; i < lo.size(); ++i) offset += static_cast<int64_t>(lo[i]) * strides[i + 2];
  *offset_bytes = offset * device_bytes(dtype);
  return make_tensor(*api_, dtype, n, c, in, &strides);
}

Status CudnnEngine::prepad(DType dtype, int n, int c, const std::vector<int>& in, const std::vector<int>& padded,
                           const std::vector<int>& lo, const TypedValue& fill, const void* x, DeviceBuffer& out) {
  KC_ASSIGN_OR_RETURN(TensorDesc full, make_tensor(*api_, dtype, n, c, padded));
  KC_ASSIGN_OR_RETURN(TensorDesc src, make_tensor(*api_, dtype, n, c, in));
  int64_t offset = 0;
  KC_ASSIGN_OR_RETURN(TensorDesc inner, interior(dtype, n, c, in, padded, lo, &offset));
  int64_t count = static_cast<int64_t>(n) * c;
  for (int e : padded) count *= e;
  KC_RETURN_IF_ERROR(ensure_size(out, count * device_bytes(dtype), "cudnn padded input"));
  KC_RETURN_IF_ERROR(cudnn_status(*api_, api_->cudnnSetTensor(handle_, full.get(), out.data(), fill.bytes),
                                  "cudnnSetTensor (padding)"));
  return cudnn_status(*api_,
                      api_->cudnnTransformTensor(handle_, &kOne, src.get(), x, &kZero, inner.get(),
                                                 static_cast<unsigned char*>(out.data()) + offset),
                      "cudnnTransformTensor (interior)");
}

StatusOr<Input> CudnnEngine::conv_input(const ConvGeometry& g, DType dtype, const void* x) {
  Input r;
  std::vector<int64_t> lo, hi;
  for (const DimGeometry& d : g.spatial.dims) {
    lo.push_back(d.pad_lo);
    hi.push_back(d.pad_hi);
  }
  r.spatial = cudnn_spatial(g.spatial.in_dims(), 1);
  if (lo == hi) {  // cuDNN's own symmetric zero padding
    r.x = x;
    r.pad = cudnn_spatial(lo, 0);
    return r;
  }
  r.prepadded = true;
  r.lo = cudnn_spatial(lo, 0);
  r.pad.assign(r.lo.size(), 0);
  const std::vector<int> padded = padded_extents(g.spatial, std::vector<int64_t>(lo.size(), 0));
  const std::vector<int> unpadded = r.spatial;
  r.spatial = padded;
  if (x == nullptr) return r;  // descriptors only: an op that does not read x (dx, db alone)
  KC_RETURN_IF_ERROR(prepad(dtype, static_cast<int>(g.batch), static_cast<int>(g.in_channels), unpadded, padded, r.lo,
                            TypedValue{}, x, xp_));
  r.x = xp_.data();
  return r;
}

// y = conv(x, w) + b, rounded once to y's dtype: b is broadcast into y (exact; beta = 0,
// so y's poison is not read) before each algorithm tried (cudnn_conv_forward's init_y),
// then the convolution adds its f32 result to it. Adding b to a convolution already
// rounded to f16/bf16 would round twice, an error outside the tolerance model wherever
// conv and bias nearly cancel.
Status CudnnEngine::conv_plus_bias(DType dtype, const ConvDescs& d, const void* x, const void* w, const void* b,
                                   void* y) {
  if (b == nullptr) return cudnn_conv_forward(call(dtype), d, x, w, y);
  auto bias_into_y = [&] {
    return cudnn_status(*api_, api_->cudnnAddTensor(handle_, &kOne, d.b.get(), b, &kZero, d.y.get(), y),
                        "cudnnAddTensor (bias)");
  };
  return cudnn_conv_forward(call(dtype), d, x, w, y, bias_into_y);
}

Status CudnnEngine::relu_in_place(const ConvDescs& d, void* y) {
  return cudnn_status(*api_,
                      api_->cudnnActivationForward(handle_, relu_.get(), &kOne, d.y.get(), y, &kZero, d.y.get(), y),
                      "cudnnActivationForward (relu)");
}

Status CudnnEngine::conv_forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) {
  KC_RETURN_IF_ERROR(ready());
  KC_ASSIGN_OR_RETURN(Input in, conv_input(g, dtype, io.x));
  KC_ASSIGN_OR_RETURN(const ConvDescs* descs, cached_conv_descs(*api_, descs_, dtype, g, in.spatial, in.pad));
  const ConvDescs& d = *descs;
  KC_RETURN_IF_ERROR(conv_plus_bias(dtype, d, in.x, io.w, io.b, io.y));
  return relu ? relu_in_place(d, io.y) : ok_status();
}

// dz = relu'(z) * dy with z = conv(x, w) + b recomputed; dz_ holds it afterwards.
Status CudnnEngine::fused_grad(const ConvGeometry& g, DType dtype, const ConvDescs& d, const Input& in,
                               const ConvIO& io) {
  const int64_t bytes = element_count(g.y_shape()) * device_bytes(dtype);
  KC_RETURN_IF_ERROR(ensure_size(z_, bytes, "cudnn z"));
  KC_RETURN_IF_ERROR(ensure_size(r_, bytes, "cudnn relu(z)"));
  KC_RETURN_IF_ERROR(ensure_size(dz_, bytes, "cudnn dz"));
  KC_RETURN_IF_ERROR(conv_plus_bias(dtype, d, in.x, io.w, io.b, z_.data()));
  KC_RETURN_IF_ERROR(cudnn_status(
      *api_,
      api_->cudnnActivationForward(handle_, relu_.get(), &kOne, d.y.get(), z_.data(), &kZero, d.y.get(), r_.data()),
      "cudnnActivationForward (relu)"));
  return cudnn_status(*api_,
                      api_->cudnnActivationBackward(handle_, relu_.get(), &kOne, d.y.get(), r_.data(), d.y.get(), io.dy,
                                                    d.y.get(), z_.data(), &kZero, d.y.get(), dz_.data()),
                      "cudnnActivationBackward (relu)");
}

StatusOr<CudnnEngine::Problem> CudnnEngine::problem(const ConvGeometry& g, DType dtype, const void* x) {
  KC_RETURN_IF_ERROR(ready());
  Problem p;
  KC_ASSIGN_OR_RETURN(p.in, conv_input(g, dtype, x));
  KC_ASSIGN_OR_RETURN(p.d, cached_conv_descs(*api_, descs_, dtype, g, p.in.spatial, p.in.pad));
  return p;
}

Status CudnnEngine::data_grad(const ConvGeometry& g, DType dtype, const Problem& p, const void* dy, const void* w,
                              void* dx) {
  const ConvDescs& d = *p.d;
  if (!p.in.prepadded) return cudnn_conv_backward_data(call(dtype), d, dy, w, dx);
  // The padded gradient, then its interior is dx.
  int64_t count = g.batch * g.in_channels;
  for (int e : p.in.spatial) count *= e;
  KC_RETURN_IF_ERROR(ensure_size(dxp_, count * device_bytes(dtype), "cudnn padded dx"));
  KC_RETURN_IF_ERROR(cudnn_conv_backward_data(call(dtype), d, dy, w, dxp_.data()));
  const int n = static_cast<int>(g.batch), c = static_cast<int>(g.in_channels);
  const std::vector<int> unpadded = cudnn_spatial(g.spatial.in_dims(), 1);
  int64_t offset = 0;
  KC_ASSIGN_OR_RETURN(TensorDesc inner, interior(dtype, n, c, unpadded, p.in.spatial, p.in.lo, &offset));
  KC_ASSIGN_OR_RETURN(TensorDesc dst, make_tensor(*api_, dtype, n, c, unpadded));
  return cudnn_status(
      *api_,
      api_->cudnnTransformTensor(handle_, &kOne, inner.get(), static_cast<unsigned char*>(dxp_.data()) + offset, &kZero,
                                 dst.get(), dx),
      "cudnnTransformTensor (crop dx)");
}

Status CudnnEngine::conv_backward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io) {
  KC_ASSIGN_OR_RETURN(Problem p, problem(g, dtype, io.x));
  const ConvDescs& d = *p.d;
  const void* dy = io.dy;
  if (relu) {
    KC_RETURN_IF_ERROR(fused_grad(g, dtype, d, p.in, io));
    dy = dz_.data();
  }
  KC_RETURN_IF_ERROR(data_grad(g, dtype, p, dy, io.w, io.dx));
  KC_RETURN_IF_ERROR(cudnn_conv_backward_filter(call(dtype), d, p.in.x, dy, io.dw));
  if (io.db == nullptr) return ok_status();
  return cudnn_status(*api_,
                      api_->cudnnConvolutionBackwardBias(handle_, &kOne, d.y.get(), dy, &kZero, d.b.get(), io.db),
                      "cudnnConvolutionBackwardBias");
}

Status CudnnEngine::conv_backward_data(const ConvGeometry& g, DType dtype, const ConvIO& io) {
  KC_ASSIGN_OR_RETURN(Problem p, problem(g, dtype, io.x));
  return data_grad(g, dtype, p, io.dy, io.w, io.dx);
}

Status CudnnEngine::conv_backward_weight(const ConvGeometry& g, DType dtype, const ConvIO& io) {
  KC_ASSIGN_OR_RETURN(Problem p, problem(g, dtype, io.x));
  return cudnn_conv_backward_filter(call(dtype), *p.d, p.in.x, io.dy, io.dw);
}

Status CudnnEngine::conv_backward_bias(const ConvGeometry& g, DType dtype, const ConvIO& io) {
  KC_ASSIGN_OR_RETURN(Problem p, problem(g, dtype, io.x));
  const ConvDescs& d = *p.d;
  return cudnn_status(*api_,
                      api_->cudnnConvolutionBackwardBias(handle_, &kOne, d.y.get(), io.dy, &kZero, d.b.get(), io.db),
                      "cudnnConvolutionBackwardBias");
}

std::string CudnnEngine::algorithm() const {
  std::string names;
  for (const auto& [key, choice] : chosen_) names += (names.empty() ? "" : "; ") + choice.name;
  return names;
}

Status CudnnEngine::pool_forward(const PoolGeometry& g, DType dtype, const PoolIO& io) {
  if (io.offsets != nullptr) return unimplemented("cudnn max pooling keeps no argmax indices (training mode)");
  KC_RETURN_IF_ERROR(ready());
  // Extent so that cuDNN's floor rule gives exactly our out (also under ceil_mode):
  // max((out - 1) * s + k, lo + in); the part past lo + in is -inf padding.
  std::vector<int64_t> lo, extra, window, stride;
  bool padded = false;
  for (const DimGeometry& d : g.spatial.dims) {
    const int64_t want = std::max((d.out - 1) * d.stride + d.kernel, d.pad_lo + d.in);
    lo.push_back(d.pad_lo);
    extra.push_back(want - d.padded());
    window.push_back(d.kernel);
    stride.push_back(d.stride);
    padded = padded || want != d.in;
  }
  const int n = static_cast<int>(g.batch), c = static_cast<int>(g.channels);
  std::vector<int> spatial = cudnn_spatial(g.spatial.in_dims(), 1);
  const void* x = io.x;
  if (padded) {
    const std::vector<int> ext = padded_extents(g.spatial, extra);
    KC_RETURN_IF_ERROR(prepad(dtype, n, c, spatial, ext, cudnn_spatial(lo, 0), negative_infinity(dtype), io.x, xp_));
    x = xp_.data();
    spatial = ext;
  }
  KC_ASSIGN_OR_RETURN(TensorDesc xd, make_tensor(*api_, dtype, n, c, spatial));
  KC_ASSIGN_OR_RETURN(TensorDesc yd, make_tensor(*api_, dtype, n, c, cudnn_spatial(g.spatial.out_dims(), 1)));
  KC_ASSIGN_OR_RETURN(PoolDesc pd, make_max_pool(*api_, cudnn_spatial(window, 1), cudnn_spatial(stride, 1)));
  return cudnn_status(*api_, api_->cudnnPoolingForward(handle_, pd.get(), &kOne, xd.get(), x, &kZero, yd.get(), io.y),
                      "cudnnPoolingForward");
}

StatusOr<CudnnEngine::AvgProblem> CudnnEngine::avg_problem(const AvgPoolGeometry& g, DType dtype, const void* x) {
  KC_RETURN_IF_ERROR(ready());
  AvgProblem p;
  std::vector<int64_t> lo, window, stride;
  for (const DimGeometry& d : g.spatial.dims) {
    lo.push_back(d.pad_lo);
    window.push_back(d.kernel);
    stride.push_back(d.stride);
  }
  p.in.x = x;
  p.in.spatial = cudnn_spatial(g.spatial.in_dims(), 1);
  if (cudnn_pads_avgpool(g)) {
    p.in.pad = cudnn_spatial(lo, 0);
  } else {  // counted padding (supports()): explicit zeros, the same sums and divisors
    p.in.prepadded = true;
    p.in.lo = cudnn_spatial(lo, 0);
    p.in.pad.assign(p.in.lo.size(), 0);
    const std::vector<int> unpadded = p.in.spatial;
    p.in.spatial = padded_extents(g.spatial, std::vector<int64_t>(lo.size(), 0));
    if (x != nullptr) {
      KC_RETURN_IF_ERROR(prepad(dtype, static_cast<int>(g.batch), static_cast<int>(g.channels), unpadded, p.in.spatial,
                                p.in.lo, TypedValue{}, x, xp_));
      p.in.x = xp_.data();
    }
  }
  KC_ASSIGN_OR_RETURN(
      p.pool, make_avg_pool(*api_, g.count_include_pad, cudnn_spatial(window, 1), p.in.pad, cudnn_spatial(stride, 1)));
  return p;
}

Status CudnnEngine::avgpool_forward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io) {
  KC_ASSIGN_OR_RETURN(AvgProblem p, avg_problem(g, dtype, io.x));
  const int n = static_cast<int>(g.batch), c = static_cast<int>(g.channels);
  KC_ASSIGN_OR_RETURN(TensorDesc xd, make_tensor(*api_, dtype, n, c, p.in.spatial));
  KC_ASSIGN_OR_RETURN(TensorDesc yd, make_tensor(*api_, dtype, n, c, cudnn_spatial(g.spatial.out_dims(), 1)));
  return cudnn_status(*api_,
                      api_->cudnnPoolingForward(handle_, p.pool.get(), &kOne, xd.get(), p.in.x, &kZero, yd.get(), io.y),
                      "cudnnPoolingForward (average)");
}

// cudnnPoolingBackward takes x and y too, which an average pool's gradient does not
// depend on and the backend interface does not pass: x is zeros (zeros_, filled once
// for the largest x so far, so that a timed run does not fill it) and y is dy, so that a
// library which read them would show as a wrong dx, never pass by chance.
Status CudnnEngine::avgpool_backward(const AvgPoolGeometry& g, DType dtype, const PoolIO& io) {
  KC_ASSIGN_OR_RETURN(AvgProblem p, avg_problem(g, dtype, nullptr));
  const int n = static_cast<int>(g.batch), c = static_cast<int>(g.channels);
  KC_ASSIGN_OR_RETURN(TensorDesc xd, make_tensor(*api_, dtype, n, c, p.in.spatial));
  KC_ASSIGN_OR_RETURN(TensorDesc yd, make_tensor(*api_, dtype, n, c, cudnn_spatial(g.spatial.out_dims(), 1)));
  int64_t count = g.batch * g.channels;
  for (int e : p.in.spatial) count *= e;
  const int64_t bytes = count * device_bytes(dtype);
  if (zeros_filled_ < bytes) {
    KC_RETURN_IF_ERROR(ensure_size(zeros_, bytes, "cudnn avgpool x (zeros)"));
    KC_RETURN_IF_ERROR(cudnn_status(*api_, api_->cudnnSetTensor(handle_, xd.get(), zeros_.data(), TypedValue{}.bytes),
                                    "cudnnSetTensor (x: zeros)"));
    zeros_filled_ = bytes;
  }
  void* dx = io.dx;
  if (p.in.prepadded) {
    KC_RETURN_IF_ERROR(ensure_size(dxp_, bytes, "cudnn padded dx"));
    dx = dxp_.data();
  }
  KC_RETURN_IF_ERROR(cudnn_status(*api_,
                                  api_->cudnnPoolingBackward(handle_, p.pool.get(), &kOne, yd.get(), io.dy, yd.get(),
                                                             io.dy, xd.get(), zeros_.data(), &kZero, xd.get(), dx),
                                  "cudnnPoolingBackward (average)"));
  if (!p.in.prepadded) return ok_status();
  // dx is the interior of the padded gradient.
  const std::vector<int> unpadded = cudnn_spatial(g.spatial.in_dims(), 1);
  int64_t offset = 0;
  KC_ASSIGN_OR_RETURN(TensorDesc inner, interior(dtype, n, c, unpadded, p.in.spatial, p.in.lo, &offset));
  KC_ASSIGN_OR_RETURN(TensorDesc dst, make_tensor(*api_, dtype, n, c, unpadded));
  return cudnn_status(
      *api_,
      api_->cudnnTransformTensor(handle_, &kOne, inner.get(), static_cast<unsigned char*>(dxp_.data()) + offset, &kZero,
                                 dst.get(), io.dx),
      "cudnnTransformTensor (crop dx)");
}

}  // namespace

std::unique_ptr<Engine> make_cudnn_engine() { return std::make_unique<CudnnEngine>(); }

}  // namespace kc::gpu
