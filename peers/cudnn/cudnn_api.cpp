// dlopen of libcudnn (cudnn_api.h). cuDNN 9's libcudnn.so.9 is a small shim that loads
// its engine libraries (libcudnn_cnn, _ops, _graph, _engines_*) from its own folder.
#include "cudnn_api.h"

#include <dlfcn.h>

#include <mutex>

namespace kc::gpu {
namespace {

const std::string kLibrary = "libcudnn.so." + std::to_string(CUDNN_MAJOR);

StatusOr<const CudnnApi*> load() {
  void* lib = dlopen(kLibrary.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return unavailable("cannot load " + kLibrary + ": " + (why ? why : "unknown error") +
                       " (set LD_LIBRARY_PATH to the folder holding cuDNN " + std::to_string(CUDNN_MAJOR) + ")");
  }
  static CudnnApi api;  // lives as long as the library, which is never closed
#define KC_CUDNN_RESOLVE(fn)                                   \
  api.fn = reinterpret_cast<decltype(&::fn)>(dlsym(lib, #fn)); \
  if (api.fn == nullptr) return unavailable(kLibrary + " has no symbol " #fn);
  KC_CUDNN_FUNCTIONS(KC_CUDNN_RESOLVE)
#undef KC_CUDNN_RESOLVE
  const size_t version = api.cudnnGetVersion();
  if (version / 10000 != CUDNN_MAJOR) {
    return unavailable(kLibrary + " reports version " + std::to_string(version) + ", but this build needs cuDNN " +
                       std::to_string(CUDNN_MAJOR) + ".x");
  }
  return &api;
}

}  // namespace

StatusOr<const CudnnApi*> cudnn_api() {
  static std::once_flag once;
  static StatusOr<const CudnnApi*> result = unavailable("not loaded");
  std::call_once(once, [] { result = load(); });
  return result;
}

Status cudnn_status(const CudnnApi& api, cudnnStatus_t s, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return ok_status();
  const std::string msg = what + ": " + api.cudnnGetErrorString(s);
  if (s == CUDNN_STATUS_NOT_SUPPORTED) return unimplemented("cuDNN does not support this: " + msg);
  if (s == CUDNN_STATUS_ALLOC_FAILED) return resource_exhausted(msg);
  return internal_error(msg);
}

}  // namespace kc::gpu
