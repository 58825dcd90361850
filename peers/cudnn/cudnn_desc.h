// cuDNN descriptors as owning values for the cudnn engine, and the mapping of our
// geometry onto cuDNN's: Nd descriptors need at least two spatial dims, so a rank-1
// case runs as N C 1 W with a unit kernel, stride and dilation on the added dim.
#pragma once

#include <memory>
#include <vector>

#include "cudnn_api.h"
#include "kc/dtype.h"
#include "kc/shape.h"

namespace kc::gpu {

// A descriptor handle with its destroy function.
template <class H>
class Desc {
 public:
  using Destroy = cudnnStatus_t (*)(H);
  Desc() = default;
  Desc(H h, Destroy destroy) : h_(h), destroy_(destroy) {}
  ~Desc() {
    if (h_) destroy_(h_);
  }
  Desc(Desc&& o) noexcept : h_(o.h_), destroy_(o.destroy_) { o.h_ = nullptr; }
  Desc& operator=(Desc&& o) noexcept {
    std::swap(h_, o.h_);
    std::swap(destroy_, o.destroy_);
    return *this;
  }
  H get() const { return h_; }

 private:
  H h_ = nullptr;
  Destroy destroy_ = nullptr;
};

using TensorDesc = Desc<cudnnTensorDescriptor_t>;
using FilterDesc = Desc<cudnnFilterDescriptor_t>;
using ConvDesc = Desc<cudnnConvolutionDescriptor_t>;
using ActDesc = Desc<cudnnActivationDescriptor_t>;
using PoolDesc = Desc<cudnnPoolingDescriptor_t>;

cudnnDataType_t cudnn_type(DType dtype);

// Spatial lists in cuDNN's order: rank 1 gets a leading unit dim (`fill` for it).
std::vector<int> cudnn_spatial(const std::vector<int64_t>& per_dim, int fill);

// A tensor [n, c, spatial...] (spatial already in cuDNN's order); packed strides unless
// `strides` is given (a view into a larger, padded tensor).
StatusOr<TensorDesc> make_tensor(const CudnnApi& api, DType dtype, int n, int c, const std::vector<int>& spatial,
                                 const std::vector<int>* strides = nullptr);

// Packed strides of [n, c, spatial...].
std::vector<int> packed_strides(int c, const std::vector<int>& spatial);

// The weights [Cout, Cin/G, k...], and the convolution with `pad` per dim (zero when the
// input is pre-padded), stride, dilation, groups, f32 compute.
StatusOr<FilterDesc> make_filter(const CudnnApi& api, DType dtype, const ConvGeometry& g);
StatusOr<ConvDesc> make_conv(const CudnnApi& api, const ConvGeometry& g, const std::vector<int>& pad);

StatusOr<ActDesc> make_relu(const CudnnApi& api);
StatusOr<PoolDesc> make_max_pool(const CudnnApi& api, const std::vector<int>& window, const std::vector<int>& stride);
// Average pooling with cuDNN's own symmetric zero padding `pad` (cuDNN order), its
// divisor the window's size (count_include_pad) or its count of non-padding elements.
StatusOr<PoolDesc> make_avg_pool(const CudnnApi& api, bool count_include_pad, const std::vector<int>& window,
                                 const std::vector<int>& pad, const std::vector<int>& stride);

// The four bytes cudnnSetTensor reads a fill value from. Its documentation says a value
// of the tensor's own type, but on an H100 f16 -inf's two bytes filled an f16 tensor with
// 0, as a float read would; negative_infinity() gives bytes that are -inf read either way
// (cudnn_desc.cpp).
struct TypedValue {
  unsigned char bytes[4] = {0, 0, 0, 0};
};
TypedValue negative_infinity(DType dtype);

}  // namespace kc::gpu
