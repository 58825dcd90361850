// Registry of backends by name.
#include "kc/registry.h"

#include <exception>

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

std::string backend_numerics(const Registry& registry, std::string_view name) {
  try {
    std::unique_ptr<Backend> b = registry.make(name);
    return b ? describe(b->numerics()) : std::string();
  } catch (const std::exception& e) {
    return std::string("unknown: its numerics() threw: ") + e.what();
  } catch (...) {
    return "unknown: its numerics() threw a non-standard exception";
  }
}

}  // namespace kc
