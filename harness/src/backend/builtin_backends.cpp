// The built-in backends: the reference, our cuda kernels and the peers, each either
// registered or listed as missing with the reason this build lacks it. Its own library
// (kc_backends), so that kc_harness, which plugins link, links no CUDA.
#include <initializer_list>
#include <string>
#include <vector>

#include "backend/build_info.h"
#include "kc/registry.h"

#ifdef KC_HAVE_CUDA
#include "kc/gpu/backends.h"  // cuda, and the cudnn peer when cuDNN was found
#include "kc/gpu/device.h"
#endif
#ifdef KC_HAVE_ONEDNN
#include "kc/onednn/backends.h"  // onednn, onednn.plain, onednn.winograd (linked in by peers/onednn)
#endif

namespace kc {
namespace {

// A built-in backend this build lacks: listed, never available, with the reason, so
// that `--backend cuda` on a build without CUDA is SKIPPED (unavailable) rather than
// an unknown name, and `--require cuda` fails with the reason.
class MissingBackend final : public Backend {
 public:
  MissingBackend(std::string name, std::string why) : name_(std::move(name)), why_(std::move(why)) {}
  std::string name() const override { return name_; }
  Status available() const override { return unavailable(why_); }
  Status conv_forward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, Tensor&) override {
    return available();
  }
  Status conv_backward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, const Tensor&, Tensor&,
                       Tensor&, Tensor*) override {
    return available();
  }
  Status maxpool_forward(const PoolGeometry&, const Tensor&, Tensor&, IndexTensor*) override { return available(); }
  Status maxpool_backward(const PoolGeometry&, const Tensor&, const IndexTensor*, Tensor&) override {
    return available();
  }

 private:
  std::string name_, why_;
};

[[maybe_unused]] Registry::Factory missing(const char* name, const char* why) {
  return [name, why] { return std::unique_ptr<Backend>(new MissingBackend(name, why)); };
}

}  // namespace

Registry builtin_registry() {
  Registry r;
  (void)r.add("reference", &make_reference_backend);
#ifdef KC_HAVE_CUDA
  (void)r.add("cuda", &gpu::make_cuda_backend);
  (void)r.add("cuda.direct", &gpu::make_cuda_direct_backend);
#ifdef KC_HAVE_CUDNN
  (void)r.add("cudnn", &gpu::make_cudnn_backend);
#else
  (void)r.add("cudnn", missing("cudnn", "built without cuDNN: cudnn.h and libcudnn were not found at configure time"));
#endif
#else
  for (const char* name : {"cuda", "cuda.direct"})
    (void)r.add(name, missing(name, "built without CUDA: no CUDA compiler was found at configure time"));
  (void)r.add("cudnn", missing("cudnn", "built without CUDA: no CUDA compiler was found at configure time"));
#endif
#ifdef KC_HAVE_ONEDNN
  (void)r.add("onednn", &onednn::make_onednn_backend);
  (void)r.add("onednn.plain", &onednn::make_onednn_plain_backend);
  (void)r.add("onednn.winograd", &onednn::make_onednn_winograd_backend);
#else
  for (const char* name : {"onednn", "onednn.plain", "onednn.winograd"})
    (void)r.add(name,
                missing(name,
                        "built without oneDNN (libdnnl-dev was not found at configure time, or KC_ENABLE_ONEDNN=OFF "
                        "was given)"));
#endif
  return r;
}

std::string peer_library_versions() {
#ifdef KC_HAVE_ONEDNN
  return onednn::library_version();
#else
  return {};
#endif
}

std::vector<std::string> builtin_kernel_plans(const Case& c) {
#ifdef KC_HAVE_CUDA
  return gpu::cuda_kernel_plan(c);
#else
  (void)c;
  return {"cuda, cuda.direct: built without CUDA"};
#endif
}

std::string gpu_device_description() {
#ifdef KC_HAVE_CUDA
  auto d = gpu::probe_device();
  return d.ok() ? gpu::describe(*d) : "none: " + d.status().message();
#else
  return {};
#endif
}

}  // namespace kc
