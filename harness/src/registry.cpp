// Registry of backends by name.
#include "kc/registry.h"

#include <exception>

#ifdef KC_HAVE_CUDA
#include "kc/gpu/backends.h"  // cuda, and the cudnn peer when cuDNN was found
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

Status Registry::add(std::string name, Factory factory) {
  if (name.empty()) return invalid_argument("backend name is empty");
  if (contains(name)) return invalid_argument("backend \"" + name + "\" is registered twice");
  entries_.emplace_back(std::move(name), std::move(factory));
  return ok_status();
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> r;
  for (const auto& [name, f] : entries_) r.push_back(name);
  return r;
}

bool Registry::contains(std::string_view name) const {
  for (const auto& [n, f] : entries_) {
    if (n == name) return true;
  }
  return false;
}

std::unique_ptr<Backend> Registry::make(std::string_view name) const {
  const Factory* f = factory(name);
  return f ? (*f)() : nullptr;
}

const Registry::Factory* Registry::factory(std::string_view name) const {
  for (const auto& [n, f] : entries_) {
    if (n == name) return &f;
  }
  return nullptr;
}

Status backend_available(const Registry& registry, std::string_view name) {
  try {
    std::unique_ptr<Backend> b = registry.make(name);
    if (!b) return not_found("no backend named '" + std::string(name) + "' (see kcheck backends)");
    return b->available();
  } catch (const std::exception& e) {
    return unavailable(std::string("its available() threw: ") + e.what());
  } catch (...) {
    return unavailable("its available() threw a non-standard exception");
  }
}

Registry builtin_registry() {
  Registry r;
  (void)r.add("reference", &make_reference_backend);
#ifdef KC_HAVE_CUDA
  (void)r.add("cuda", &gpu::make_cuda_backend);
#ifdef KC_HAVE_CUDNN
  (void)r.add("cudnn", &gpu::make_cudnn_backend);
#else
  (void)r.add("cudnn", missing("cudnn", "built without cuDNN: cudnn.h and libcudnn were not found at configure time"));
#endif
#else
  (void)r.add("cuda", missing("cuda", "built without CUDA: no CUDA compiler was found at configure time"));
  (void)r.add("cudnn", missing("cudnn", "built without CUDA: no CUDA compiler was found at configure time"));
#endif
  return r;
}

}  // namespace kc
