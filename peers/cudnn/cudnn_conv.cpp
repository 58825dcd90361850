// cuDNN convolution calls with heuristic (or, for the bench, Find-timed) algorithm
// choice (cudnn_conv.h).
#include "cudnn_conv.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace kc::gpu {
namespace {

constexpr int kMaxAlgos = 16;
const float kOne = 1.0f, kZero = 0.0f;

bool acceptable_math(DType dtype, cudnnMathType_t math) {
  if (math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;  // may drop precision
  return dtype != DType::kF32 || math != CUDNN_TENSOR_OP_MATH;      // f32: no TF32
}

// FFT and Winograd algorithms transform whole tiles: their rounding is not bounded by
// each output's own sum of |products| (the tolerance model), and they are not exact on
// integer data that GEMM-class and direct algorithms sum exactly (`tolerance: exact`).
bool within_tolerance_model(cudnnConvolutionFwdAlgo_t a) {
  return a != CUDNN_CONVOLUTION_FWD_ALGO_FFT && a != CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING &&
         a != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD && a != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool within_tolerance_model(cudnnConvolutionBwdDataAlgo_t a) {
  return a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT && a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING &&
         a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD && a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool within_tolerance_model(cudnnConvolutionBwdFilterAlgo_t a) {
  return a != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT && a != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING &&
         a != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD && a != CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  static const char* const kNames[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
                                       "WINOGRAD",      "WINOGRAD_NONFUSED"};
  const int i = static_cast<int>(a);
  return i >= 0 && i < 8 ? kNames[i] : "?";
}
const char* algo_name(cudnnConvolutionBwdDataAlgo_t a) {
  static const char* const kNames[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  const int i = static_cast<int>(a);
  return i >= 0 && i < 6 ? kNames[i] : "?";
}
const char* algo_name(cudnnConvolutionBwdFilterAlgo_t a) {
  static const char* const kNames[] = {"ALGO_0",    "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED",
                                       "FFT_TILING"};
  const int i = static_cast<int>(a);
  return i >= 0 && i < 7 ? kNames[i] : "?";
}

// Diagnostics (environment): KC_CUDNN_TRACE=1 prints each algorithm chosen to stderr;
// KC_CUDNN_ALGO="conv forward=1" admits only algorithm 1 for that call ("conv forward",
// "conv backward-data", "conv backward-filter"), to tell algorithms apart on a case.
bool trace_choices() {
  static const bool on = [] {
    const char* v = std::getenv("KC_CUDNN_TRACE");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
  }();
  return on;
}

// -1 unless KC_CUDNN_ALGO names this call with a whole number (a malformed one is said
// on stderr and ignored, rather than read as algorithm 0).
int forced_algorithm(const char* what) {
  const char* v = std::getenv("KC_CUDNN_ALGO");
  if (v == nullptr) return -1;
  const std::string spec(v), prefix = std::string(what) + "=";
  if (spec.rfind(prefix, 0) != 0) return -1;
  const char* digits = spec.c_str() + prefix.size();
  char* end = nullptr;
  const long n = std::strtol(digits, &end, 10);
  if (end == digits || *end != '\0' || n < 0 || n > 99) {
    std::fprintf(stderr, "cudnn: KC_CUDNN_ALGO=%s: expected %s=N with N a whole number; ignored\n", v, what);
    return -1;
  }
  return static_cast<int>(n);
}

// Whether the heuristics' candidate p may be tried: forced (the only one admitted), or
// else not excluded, with a math type and algorithm inside the tolerance model, and
// deterministic where the call asks for it.
template <class Perf>
bool usable(const CudnnCall& call, const Perf& p, int forced, int excluded) {
  const int algo = static_cast<int>(p.algo);
  if (forced >= 0 ? algo != forced : algo == excluded) return false;
  if (p.status != CUDNN_STATUS_SUCCESS || !acceptable_math(call.dtype, p.mathType)) return false;
  if (!within_tolerance_model(p.algo)) return false;
  return !call.deterministic || p.determinism == CUDNN_DETERMINISTIC;
}

// What cuDNN's Find chose per problem, for the whole process: the bench prepares many
// instances of one op (its cold mode rotates them), each on its own engine, and timing
// every algorithm again for each would cost more than the runs measured.
std::mutex g_found_mutex;
AlgoCache g_found;

// Copies Find's earlier choice for `key` into the call's cache (where it has none).
void recall_found(const CudnnCall& call, const std::string& key) {
  if (!call.find || call.chosen.count(key) > 0) return;
  std::lock_guard<std::mutex> lock(g_found_mutex);
  if (auto it = g_found.find(key); it != g_found.end()) call.chosen[key] = it->second;
}

void remember_found(const CudnnCall& call, const std::string& key) {
  if (!call.find) return;
  std::lock_guard<std::mutex> lock(g_found_mutex);
  g_found[key] = call.chosen[key];
}

// Runs run(algo, workspace, bytes) with the algorithm chosen before for this problem,
// else the heuristics' candidates in order until one succeeds, and remembers it. Perf is
// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t; size(algo, &bytes) asks the
// workspace under the math type set.
// `excluded`, if not negative, is an algorithm never to use for this call.
template <class Perf, class Query, class Size, class Run>
Status with_algorithms(const CudnnCall& call, const ConvDescs& d, const char* what, Query query, Size size, Run run,
                       int excluded = -1) {
  using Algo = decltype(Perf{}.algo);
  const CudnnApi& api = call.api;
  const bool f32 = call.dtype == DType::kF32;
  const std::string key = std::string(what) + "|" + d.key + (call.deterministic ? "|deterministic" : "") +
                          (excluded >= 0 ? "|not " + std::to_string(excluded) : "");
  // Sets the math type, sizes (unless `known`) and allocates the workspace, runs.
  size_t bytes = 0;
  auto attempt = [&](Algo algo, cudnnMathType_t math, const size_t* known) -> Status {
    KC_RETURN_IF_ERROR(
        cudnn_status(api, api.cudnnSetConvolutionMathType(d.conv.get(), math), "cudnnSetConvolutionMathType"));
    if (known != nullptr) {
      bytes = *known;
    } else {
      KC_RETURN_IF_ERROR(cudnn_status(api, size(algo, &bytes), std::string(what) + " workspace size"));
    }
    KC_RETURN_IF_ERROR(ensure_size(call.workspace, static_cast<int64_t>(bytes), "cudnn workspace"));
    return run(algo, call.workspace.data(), bytes);
  };
  recall_found(call, key);
  if (auto it = call.chosen.find(key); it != call.chosen.end()) {
    const AlgoChoice c = it->second;
    if (attempt(static_cast<Algo>(c.algo), c.math, &c.workspace_bytes).ok()) return ok_status();
    call.chosen.erase(it);  // search again
  }
  KC_RETURN_IF_ERROR(
      cudnn_status(api, api.cudnnSetConvolutionMathType(d.conv.get(), f32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
                   "cudnnSetConvolutionMathType"));
  Perf perfs[kMaxAlgos];
  int count = 0;
  KC_RETURN_IF_ERROR(cudnn_status(api, query(perfs, &count), std::string(what) + " algorithm query"));
  Status last = unimplemented(std::string(what) + ": cuDNN offers no usable algorithm for this problem (" +
                              (call.deterministic ? "deterministic, " : "") + "no TF32, no FFT or Winograd" +
                              (excluded >= 0 ? ", not algorithm " + std::to_string(excluded) : "") + ")");
  const int forced = forced_algorithm(what);
  for (int i = 0; i < count; ++i) {
    const Perf& p = perfs[i];
    if (!usable(call, p, forced, excluded)) continue;
    const cudnnMathType_t math = f32 ? CUDNN_FMA_MATH : p.mathType;
    const Status s = attempt(p.algo, math, nullptr);  // a workspace too large to allocate falls through too
    if (s.ok()) {
      if (trace_choices()) {
        std::fprintf(stderr, "cudnn: %s %s: algorithm %d, math type %d, workspace %zu bytes\n", what, key.c_str(),
                     static_cast<int>(p.algo), static_cast<int>(math), bytes);
      }
      const std::string name = std::string(what) + ": " + algo_name(p.algo) + " (" +
                               std::to_string(static_cast<int>(p.algo)) +
                               (math == CUDNN_TENSOR_OP_MATH ? "), tensor ops" : ")") + (call.find ? ", by Find" : "");
      call.chosen[key] = AlgoChoice{static_cast<int>(p.algo), math, bytes, name};
      remember_found(call, key);
      return s;
    }
    last = s;
  }
  return last;
}

std::string conv_key(DType dtype, const ConvGeometry& g, const std::vector<int>& x_spatial,
                     const std::vector<int>& pad) {
  std::string key = std::string(dtype_name(dtype)) + " n" + std::to_string(g.batch) + " c" +
                    std::to_string(g.in_channels) + " k" + std::to_string(g.out_channels) + " g" +
                    std::to_string(g.groups) + " x";
  for (int e : x_spatial) key += " " + std::to_string(e);
  key += " pad";
  for (int e : pad) key += " " + std::to_string(e);
  for (const DimGeometry& dim : g.spatial.dims) {
    key +=
        " [" + std::to_string(dim.kernel) + " " + std::to_string(dim.stride) + " " + std::to_string(dim.dilation) + "]";
  }
  return key;
}

StatusOr<ConvDescs> make_conv_descs(const CudnnApi& api, DType dtype, const ConvGeometry& g,
                                    const std::vector<int>& x_spatial, const std::vector<int>& pad) {
  ConvDescs d;
  const int n = static_cast<int>(g.batch), cin = static_cast<int>(g.in_channels),
            cout = static_cast<int>(g.out_channels);
  d.key = conv_key(dtype, g, x_spatial, pad);
  KC_ASSIGN_OR_RETURN(d.x, make_tensor(api, dtype, n, cin, x_spatial));
  KC_ASSIGN_OR_RETURN(d.y, make_tensor(api, dtype, n, cout, cudnn_spatial(g.spatial.out_dims(), 1)));
  KC_ASSIGN_OR_RETURN(d.b, make_tensor(api, dtype, 1, cout, std::vector<int>(x_spatial.size(), 1)));
  KC_ASSIGN_OR_RETURN(d.w, make_filter(api, dtype, g));
  KC_ASSIGN_OR_RETURN(d.conv, make_conv(api, g, pad));
  return d;
}

}  // namespace

StatusOr<const ConvDescs*> cached_conv_descs(const CudnnApi& api, ConvDescCache& cache, DType dtype,
                                             const ConvGeometry& g, const std::vector<int>& x_spatial,
                                             const std::vector<int>& pad) {
  const std::string key = conv_key(dtype, g, x_spatial, pad);
  if (auto it = cache.find(key); it != cache.end()) return &it->second;
  KC_ASSIGN_OR_RETURN(ConvDescs d, make_conv_descs(api, dtype, g, x_spatial, pad));
  return &cache.emplace(key, std::move(d)).first->second;
}

Status cudnn_conv_forward(const CudnnCall& call, const ConvDescs& d, const void* x, const void* w, void* y,
                          const std::function<Status()>& init_y) {
  const CudnnApi& api = call.api;
  auto query = [&](cudnnConvolutionFwdAlgoPerf_t* perfs, int* count) {
    const auto ask = call.find ? api.cudnnFindConvolutionForwardAlgorithm : api.cudnnGetConvolutionForwardAlgorithm_v7;
    return ask(call.handle, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), kMaxAlgos, count, perfs);
  };
  auto run = [&](cudnnConvolutionFwdAlgo_t algo, void* ws, size_t bytes) -> Status {
    if (init_y) KC_RETURN_IF_ERROR(init_y());
    return cudnn_status(api,
                        api.cudnnConvolutionForward(call.handle, &kOne, d.x.get(), x, d.w.get(), w, d.conv.get(), algo,
                                                    ws, bytes, init_y ? &kOne : &kZero, d.y.get(), y),
                        "cudnnConvolutionForward");
  };
  auto size = [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
    return api.cudnnGetConvolutionForwardWorkspaceSize(call.handle, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), algo,
                                                       bytes);
  };
  // f16/bf16 with y blended in (beta = 1): implicit precomputed GEMM with tensor ops
  // rounded before the blend on an H100 (cuDNN 9): conv + bias up to 1.6 times the bound
  // off on 5 of 40 f16/bf16 cases (4 bf16, 1 f16), where implicit GEMM passed all 40 and
  // GEMM all it was offered (not the 3-D ones): reports/gpu/2026-11-26-h100. Without a
  // blend the same cases passed with it.
  const int excluded = init_y && call.dtype != DType::kF32 ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM : -1;
  return with_algorithms<cudnnConvolutionFwdAlgoPerf_t>(call, d, "conv forward", query, size, run, excluded);
}

Status cudnn_conv_backward_data(const CudnnCall& call, const ConvDescs& d, const void* dy, const void* w, void* dx) {
  const CudnnApi& api = call.api;
  auto query = [&](cudnnConvolutionBwdDataAlgoPerf_t* perfs, int* count) {
    const auto ask =
        call.find ? api.cudnnFindConvolutionBackwardDataAlgorithm : api.cudnnGetConvolutionBackwardDataAlgorithm_v7;
    return ask(call.handle, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), kMaxAlgos, count, perfs);
  };
  auto run = [&](cudnnConvolutionBwdDataAlgo_t algo, void* ws, size_t bytes) {
    return cudnn_status(api,
                        api.cudnnConvolutionBackwardData(call.handle, &kOne, d.w.get(), w, d.y.get(), dy, d.conv.get(),
                                                         algo, ws, bytes, &kZero, d.x.get(), dx),
                        "cudnnConvolutionBackwardData");
  };
  auto size = [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
    return api.cudnnGetConvolutionBackwardDataWorkspaceSize(call.handle, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                            algo, bytes);
  };
  return with_algorithms<cudnnConvolutionBwdDataAlgoPerf_t>(call, d, "conv backward-data", query, size, run);
}

Status cudnn_conv_backward_filter(const CudnnCall& call, const ConvDescs& d, const void* x, const void* dy, void* dw) {
  const CudnnApi& api = call.api;
  auto query = [&](cudnnConvolutionBwdFilterAlgoPerf_t* perfs, int* count) {
    const auto ask =
        call.find ? api.cudnnFindConvolutionBackwardFilterAlgorithm : api.cudnnGetConvolutionBackwardFilterAlgorithm_v7;
    return ask(call.handle, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), kMaxAlgos, count, perfs);
  };
  auto run = [&](cudnnConvolutionBwdFilterAlgo_t algo, void* ws, size_t bytes) {
    return cudnn_status(api,
                        api.cudnnConvolutionBackwardFilter(call.handle, &kOne, d.x.get(), x, d.y.get(), dy,
                                                           d.conv.get(), algo, ws, bytes, &kZero, d.w.get(), dw),
                        "cudnnConvolutionBackwardFilter");
  };
  auto size = [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
    return api.cudnnGetConvolutionBackwardFilterWorkspaceSize(call.handle, d.x.get(), d.y.get(), d.conv.get(),
                                                              d.w.get(), algo, bytes);
  };
  return with_algorithms<cudnnConvolutionBwdFilterAlgoPerf_t>(call, d, "conv backward-filter", query, size, run);
}

}  // namespace kc::gpu
