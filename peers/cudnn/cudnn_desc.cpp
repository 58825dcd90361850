// cuDNN descriptor construction for the cudnn engine (cudnn_desc.h).
#include "cudnn_desc.h"

#include <cstring>
#include <limits>

#include "kc/gpu/host_convert.h"

namespace kc::gpu {

cudnnDataType_t cudnn_type(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return CUDNN_DATA_HALF;
    case DType::kBF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

std::vector<int> cudnn_spatial(const std::vector<int64_t>& per_dim, int fill) {
  std::vector<int> r;
  if (per_dim.size() == 1) r.push_back(fill);
  for (int64_t v : per_dim) r.push_back(static_cast<int>(v));
  return r;
}

std::vector<int> packed_strides(int c, const std::vector<int>& spatial) {
  std::vector<int> dims{0, c};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  std::vector<int> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

StatusOr<TensorDesc> make_tensor(const CudnnApi& api, DType dtype, int n, int c, const std::vector<int>& spatial,
                                 const std::vector<int>* strides) {
  cudnnTensorDescriptor_t h = nullptr;
  KC_RETURN_IF_ERROR(cudnn_status(api, api.cudnnCreateTensorDescriptor(&h), "cudnnCreateTensorDescriptor"));
  TensorDesc d(h, api.cudnnDestroyTensorDescriptor);
  std::vector<int> dims{n, c};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  const std::vector<int> packed = packed_strides(c, spatial);
  const std::vector<int>& s = strides ? *strides : packed;
  KC_RETURN_IF_ERROR(cudnn_status(
      api, api.cudnnSetTensorNdDescriptor(h, cudnn_type(dtype), static_cast<int>(dims.size()), dims.data(), s.data()),
      "cudnnSetTensorNdDescriptor"));
  return d;
}

StatusOr<FilterDesc> make_filter(const CudnnApi& api, DType dtype, const ConvGeometry& g) {
  cudnnFilterDescriptor_t h = nullptr;
  KC_RETURN_IF_ERROR(cudnn_status(api, api.cudnnCreateFilterDescriptor(&h), "cudnnCreateFilterDescriptor"));
  FilterDesc d(h, api.cudnnDestroyFilterDescriptor);
  std::vector<int> dims{static_cast<int>(g.out_channels), static_cast<int>(g.in_per_group())};
  const std::vector<int> k = cudnn_spatial(g.spatial.kernel_dims(), 1);
  dims.insert(dims.end(), k.begin(), k.end());
  KC_RETURN_IF_ERROR(cudnn_status(api,
                                  api.cudnnSetFilterNdDescriptor(h, cudnn_type(dtype), CUDNN_TENSOR_NCHW,
                                                                 static_cast<int>(dims.size()), dims.data()),
                                  "cudnnSetFilterNdDescriptor"));
  return d;
}

StatusOr<ConvDesc> make_conv(const CudnnApi& api, const ConvGeometry& g, const std::vector<int>& pad) {
  cudnnConvolutionDescriptor_t h = nullptr;
  KC_RETURN_IF_ERROR(cudnn_status(api, api.cudnnCreateConvolutionDescriptor(&h), "cudnnCreateConvolutionDescriptor"));
  ConvDesc d(h, api.cudnnDestroyConvolutionDescriptor);
  std::vector<int64_t> stride, dilation;
  for (const DimGeometry& s : g.spatial.dims) {
    stride.push_back(s.stride);
    dilation.push_back(s.dilation);
  }
  const std::vector<int> st = cudnn_spatial(stride, 1), di = cudnn_spatial(dilation, 1);
  KC_RETURN_IF_ERROR(
      cudnn_status(api,
                   api.cudnnSetConvolutionNdDescriptor(h, static_cast<int>(pad.size()), pad.data(), st.data(),
                                                       di.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                   "cudnnSetConvolutionNdDescriptor"));
  KC_RETURN_IF_ERROR(cudnn_status(api, api.cudnnSetConvolutionGroupCount(h, static_cast<int>(g.groups)),
                                  "cudnnSetConvolutionGroupCount"));
  return d;
}

StatusOr<ActDesc> make_relu(const CudnnApi& api) {
  cudnnActivationDescriptor_t h = nullptr;
  KC_RETURN_IF_ERROR(cudnn_status(api, api.cudnnCreateActivationDescriptor(&h), "cudnnCreateActivationDescriptor"));
  ActDesc d(h, api.cudnnDestroyActivationDescriptor);
  KC_RETURN_IF_ERROR(cudnn_status(api,
                                  api.cudnnSetActivationDescriptor(h, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
                                  "cudnnSetActivationDescriptor"));
  return d;
}

StatusOr<PoolDesc> make_max_pool(const CudnnApi& api, const std::vector<int>& window, const std::vector<int>& stride) {
  cudnnPoolingDescriptor_t h = nullptr;
  KC_RETURN_IF_ERROR(cudnn_status(api, api.cudnnCreatePoolingDescriptor(&h), "cudnnCreatePoolingDescriptor"));
  PoolDesc d(h, api.cudnnDestroyPoolingDescriptor);
  const std::vector<int> pad(window.size(), 0);  // the engine pre-pads with -inf instead
  KC_RETURN_IF_ERROR(cudnn_status(
      api,
      api.cudnnSetPoolingNdDescriptor(h, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_PROPAGATE_NAN,
                                      static_cast<int>(window.size()), window.data(), pad.data(), stride.data()),
      "cudnnSetPoolingNdDescriptor"));
  return d;
}

StatusOr<PoolDesc> make_avg_pool(const CudnnApi& api, bool count_include_pad, const std::vector<int>& window,
                                 const std::vector<int>& pad, const std::vector<int>& stride) {
  cudnnPoolingDescriptor_t h = nullptr;
  KC_RETURN_IF_ERROR(cudnn_status(api, api.cudnnCreatePoolingDescriptor(&h), "cudnnCreatePoolingDescriptor"));
  PoolDesc d(h, api.cudnnDestroyPoolingDescriptor);
  const cudnnPoolingMode_t mode =
      count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  KC_RETURN_IF_ERROR(
      cudnn_status(api,
                   api.cudnnSetPoolingNdDescriptor(h, mode, CUDNN_PROPAGATE_NAN, static_cast<int>(window.size()),
                                                   window.data(), pad.data(), stride.data()),
                   "cudnnSetPoolingNdDescriptor (average)"));
  return d;
}

// cuDNN's documentation says cudnnSetTensor reads a value of the tensor's type, but on an
// H100 (cuDNN 9) an f16 tensor set from the two bytes of f16 -inf (0xFC00, zero above)
// held 0, as if a float were read (0x0000FC00, a subnormal that rounds to 0): an
// all-negative pooling window over the padding said 0. For f16 and bf16 the four bytes
// are -inf read either way: the low half is the 16-bit -inf and, read as a float, they
// are a value that rounds to -inf in that dtype (-66040 for f16, -3.4028e38 for bf16).
TypedValue negative_infinity(DType dtype) {
  TypedValue v;
  uint32_t bits = 0xFF800000u;  // f32 -inf
  if (dtype == DType::kF16) bits = 0xC780FC00u;
  if (dtype == DType::kBF16) bits = 0xFF7FFF80u;
  std::memcpy(v.bytes, &bits, 4);
  return v;
}

}  // namespace kc::gpu
