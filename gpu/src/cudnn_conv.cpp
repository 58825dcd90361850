// cuDNN convolution calls with heuristic algorithm choice (cudnn_conv.h).
#include "cudnn_conv.h"

namespace kc::gpu {
namespace {

constexpr int kMaxAlgos = 16;
const float kOne = 1.0f, kZero = 0.0f;

bool acceptable_math(DType dtype, cudnnMathType_t math) {
  if (math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;  // may drop precision
  return dtype != DType::kF32 || math != CUDNN_TENSOR_OP_MATH;        // f32: no TF32
}

// Runs run(algo, workspace_bytes) for the heuristics' candidates in order until one
// succeeds. Perf is cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t.
template <class Perf, class Query, class Run>
Status with_algorithms(const CudnnCall& call, const ConvDescs& d, const char* what, Query query, Run run) {
  const CudnnApi& api = call.api;
  const bool f32 = call.dtype == DType::kF32;
  KC_RETURN_IF_ERROR(cudnn_status(
      api, api.cudnnSetConvolutionMathType(d.conv.get(), f32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
      "cudnnSetConvolutionMathType"));
  Perf perfs[kMaxAlgos];
  int count = 0;
  KC_RETURN_IF_ERROR(cudnn_status(api, query(perfs, &count), std::string(what) + " algorithm query"));
  Status last = unimplemented(std::string(what) + ": cuDNN offers no usable algorithm for this problem" +
                              (call.deterministic ? " (deterministic, no TF32)" : " (no TF32)"));
  for (int i = 0; i < count; ++i) {
    const Perf& p = perfs[i];
    if (p.status != CUDNN_STATUS_SUCCESS || !acceptable_math(call.dtype, p.mathType)) continue;
    if (call.deterministic && p.determinism != CUDNN_DETERMINISTIC) continue;
    KC_RETURN_IF_ERROR(cudnn_status(api, api.cudnnSetConvolutionMathType(d.conv.get(), f32 ? CUDNN_FMA_MATH : p.mathType),
                                    "cudnnSetConvolutionMathType"));
    KC_RETURN_IF_ERROR(ensure_size(call.workspace, static_cast<int64_t>(p.memory), "cudnn workspace"));
    const Status s = run(p.algo, call.workspace.data(), p.memory);
    if (s.ok()) return s;
    last = s;
  }
  return last;
}

}  // namespace

StatusOr<ConvDescs> make_conv_descs(const CudnnApi& api, DType dtype, const ConvGeometry& g,
                                    const std::vector<int>& x_spatial, const std::vector<int>& pad) {
  ConvDescs d;
  const int n = static_cast<int>(g.batch), cin = static_cast<int>(g.in_channels),
            cout = static_cast<int>(g.out_channels);
  KC_ASSIGN_OR_RETURN(d.x, make_tensor(api, dtype, n, cin, x_spatial));
  KC_ASSIGN_OR_RETURN(d.y, make_tensor(api, dtype, n, cout, cudnn_spatial(g.spatial.out_dims(), 1)));
  KC_ASSIGN_OR_RETURN(d.b, make_tensor(api, dtype, 1, cout, std::vector<int>(x_spatial.size(), 1)));
  KC_ASSIGN_OR_RETURN(d.w, make_filter(api, dtype, g));
  KC_ASSIGN_OR_RETURN(d.conv, make_conv(api, g, pad));
  return d;
}

Status cudnn_conv_forward(const CudnnCall& call, const ConvDescs& d, const void* x, const void* w, void* y) {
  const CudnnApi& api = call.api;
  auto query = [&](cudnnConvolutionFwdAlgoPerf_t* perfs, int* count) {
    return api.cudnnGetConvolutionForwardAlgorithm_v7(call.handle, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                      kMaxAlgos, count, perfs);
  };
  auto run = [&](cudnnConvolutionFwdAlgo_t algo, void* ws, size_t bytes) {
    return cudnn_status(api,
                        api.cudnnConvolutionForward(call.handle, &kOne, d.x.get(), x, d.w.get(), w, d.conv.get(), algo,
                                                    ws, bytes, &kZero, d.y.get(), y),
                        "cudnnConvolutionForward");
  };
  return with_algorithms<cudnnConvolutionFwdAlgoPerf_t>(call, d, "conv forward", query, run);
}

Status cudnn_conv_backward_data(const CudnnCall& call, const ConvDescs& d, const void* dy, const void* w, void* dx) {
  const CudnnApi& api = call.api;
  auto query = [&](cudnnConvolutionBwdDataAlgoPerf_t* perfs, int* count) {
    return api.cudnnGetConvolutionBackwardDataAlgorithm_v7(call.handle, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                           kMaxAlgos, count, perfs);
  };
  auto run = [&](cudnnConvolutionBwdDataAlgo_t algo, void* ws, size_t bytes) {
    return cudnn_status(api,
                        api.cudnnConvolutionBackwardData(call.handle, &kOne, d.w.get(), w, d.y.get(), dy, d.conv.get(),
                                                         algo, ws, bytes, &kZero, d.x.get(), dx),
                        "cudnnConvolutionBackwardData");
  };
  return with_algorithms<cudnnConvolutionBwdDataAlgoPerf_t>(call, d, "conv backward-data", query, run);
}

Status cudnn_conv_backward_filter(const CudnnCall& call, const ConvDescs& d, const void* x, const void* dy, void* dw) {
  const CudnnApi& api = call.api;
  auto query = [&](cudnnConvolutionBwdFilterAlgoPerf_t* perfs, int* count) {
    return api.cudnnGetConvolutionBackwardFilterAlgorithm_v7(call.handle, d.x.get(), d.y.get(), d.conv.get(),
                                                             d.w.get(), kMaxAlgos, count, perfs);
  };
  auto run = [&](cudnnConvolutionBwdFilterAlgo_t algo, void* ws, size_t bytes) {
    return cudnn_status(api,
                        api.cudnnConvolutionBackwardFilter(call.handle, &kOne, d.x.get(), x, d.y.get(), dy,
                                                           d.conv.get(), algo, ws, bytes, &kZero, d.w.get(), dw),
                        "cudnnConvolutionBackwardFilter");
  };
  return with_algorithms<cudnnConvolutionBwdFilterAlgoPerf_t>(call, d, "conv backward-filter", query, run);
}

}  // namespace kc::gpu
