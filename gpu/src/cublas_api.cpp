// dlopen of libcublas (cublas_api.h). libcublas.so.N loads libcublasLt.so.N from the
// library path itself: the bundle carries both (gpu/bundle/assemble.cmake).
#include "cublas_api.h"

#include <dlfcn.h>

#include <mutex>

namespace kc::gpu {
namespace {

const std::string kLibrary = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);

template <class F>
Status resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr ? ok_status() : unavailable(kLibrary + " has no symbol " + name);
}

StatusOr<const CublasApi*> load() {
  void* lib = dlopen(kLibrary.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return unavailable("cannot load " + kLibrary + ": " + (why ? why : "unknown error") +
                       " (set LD_LIBRARY_PATH to the folder holding cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) + ")");
  }
  static CublasApi api;  // lives as long as the library, which is never closed
  KC_RETURN_IF_ERROR(resolve(lib, "cublasCreate_v2", api.create));
  KC_RETURN_IF_ERROR(resolve(lib, "cublasDestroy_v2", api.destroy));
  KC_RETURN_IF_ERROR(resolve(lib, "cublasGetVersion_v2", api.version));
  KC_RETURN_IF_ERROR(resolve(lib, "cublasSetMathMode", api.set_math_mode));
  KC_RETURN_IF_ERROR(resolve(lib, "cublasGetStatusString", api.status_string));
  KC_RETURN_IF_ERROR(resolve(lib, "cublasGemmEx", api.gemm_ex));
  return &api;
}

}  // namespace

StatusOr<const CublasApi*> cublas_api() {
  static std::once_flag once;
  static StatusOr<const CublasApi*> result = unavailable("not loaded");
  std::call_once(once, [] { result = load(); });
  return result;
}

Status cublas_status(const CublasApi& api, cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return ok_status();
  const std::string msg = what + ": " + api.status_string(s);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) return unimplemented(msg);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return resource_exhausted(msg);
  return internal_error(msg);
}

}  // namespace kc::gpu
