// cuDNN through dlopen: the table of the legacy-API functions the cudnn engine uses,
// resolved from libcudnn.so.<major> at run time. kc_gpu therefore has no link-time
// dependency on cuDNN: a machine without it (or with another major version) reports
// "cudnn: unavailable (reason)" and everything else runs. The prototypes come from
// cudnn.h at build time (cuDNN 9's legacy API: deprecated in favour of the graph API,
// still shipped and supported, and the simplest for a peer).
#pragma once

#include <cudnn.h>

#include <string>

#include "kc/status.h"

#define KC_CUDNN_FUNCTIONS(X)                       \
  X(cudnnGetVersion)                                \
  X(cudnnGetErrorString)                            \
  X(cudnnCreate)                                    \
  X(cudnnSetStream)                                 \
  X(cudnnFindConvolutionForwardAlgorithm)           \
  X(cudnnFindConvolutionBackwardDataAlgorithm)      \
  X(cudnnFindConvolutionBackwardFilterAlgorithm)    \
  X(cudnnDestroy)                                   \
  X(cudnnCreateTensorDescriptor)                    \
  X(cudnnDestroyTensorDescriptor)                   \
  X(cudnnSetTensorNdDescriptor)                     \
  X(cudnnCreateFilterDescriptor)                    \
  X(cudnnDestroyFilterDescriptor)                   \
  X(cudnnSetFilterNdDescriptor)                     \
  X(cudnnCreateConvolutionDescriptor)               \
  X(cudnnDestroyConvolutionDescriptor)              \
  X(cudnnSetConvolutionNdDescriptor)                \
  X(cudnnSetConvolutionGroupCount)                  \
  X(cudnnSetConvolutionMathType)                    \
  X(cudnnGetConvolutionForwardAlgorithm_v7)         \
  X(cudnnGetConvolutionForwardWorkspaceSize)        \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)   \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionForward)                        \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)    \
  X(cudnnConvolutionBackwardData)                   \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)  \
  X(cudnnConvolutionBackwardFilter)                 \
  X(cudnnConvolutionBackwardBias)                   \
  X(cudnnAddTensor)                                 \
  X(cudnnSetTensor)                                 \
  X(cudnnTransformTensor)                           \
  X(cudnnCreateActivationDescriptor)                \
  X(cudnnDestroyActivationDescriptor)               \
  X(cudnnSetActivationDescriptor)                   \
  X(cudnnActivationForward)                         \
  X(cudnnActivationBackward)                        \
  X(cudnnCreatePoolingDescriptor)                   \
  X(cudnnDestroyPoolingDescriptor)                  \
  X(cudnnSetPoolingNdDescriptor)                    \
  X(cudnnPoolingForward)                            \
  X(cudnnPoolingBackward)

namespace kc::gpu {

struct CudnnApi {
#define KC_CUDNN_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KC_CUDNN_FUNCTIONS(KC_CUDNN_MEMBER)
#undef KC_CUDNN_MEMBER
};

// The loaded table, or unavailable(why: the library is missing, a symbol is missing, or
// its major version differs from the headers this was built with). Loaded once.
StatusOr<const CudnnApi*> cudnn_api();

// A cuDNN status as a Status: NOT_SUPPORTED is unimplemented (the case is skipped),
// allocation failure resource_exhausted, anything else internal.
Status cudnn_status(const CudnnApi& api, cudnnStatus_t s, const std::string& what);

}  // namespace kc::gpu
