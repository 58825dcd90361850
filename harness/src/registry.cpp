// Registry of backends by name.
#include "kc/registry.h"

#ifdef KC_HAVE_CUDA
#include "kc/gpu/backends.h"  // cuda, and the cudnn peer when cuDNN was found
#endif

namespace kc {

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

Registry builtin_registry() {
  Registry r;
  (void)r.add("reference", &make_reference_backend);
#ifdef KC_HAVE_CUDA
  (void)r.add("cuda", &gpu::make_cuda_backend);
#ifdef KC_HAVE_CUDNN
  (void)r.add("cudnn", &gpu::make_cudnn_backend);
#endif
#endif
  return r;
}

}  // namespace kc
