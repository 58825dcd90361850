// cuBLAS through dlopen, like cuDNN (peers/cudnn/cudnn_api.h): the few functions the
// GEMM ceilings use, resolved from libcublas.so.<major> at run time, so kc_gpu has no
// link-time dependency on cuBLAS and a machine without it says why and runs the rest.
// Internal to kc_gpu.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "kc/status.h"

namespace kc::gpu {

struct CublasApi {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasGetVersion_v2) version = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
  // cublasGemmEx is overloaded in C++ (a cudaDataType compute type shim): the C one.
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmEx gemm_ex = nullptr;
};

// The loaded table, or unavailable(why). Loaded once.
StatusOr<const CublasApi*> cublas_api();

Status cublas_status(const CublasApi& api, cublasStatus_t s, const std::string& what);

}  // namespace kc::gpu
