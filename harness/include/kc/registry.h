// The backend registry (docs/architecture.md, "Data flow"; docs/plugins.md): backends are an open set, registered by
// name with a factory. kcheck builds a fresh backend inside each worker process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kc/backend.h"
#include "kc/status.h"

namespace kc {

class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Backend>()>;

  // invalid_argument for a name that breaks the rule (backend_name_problem) or one
  // already registered; a refused name is also kept in problems(), so that a plugin that
  // ignores the Status is refused when it is loaded.
  Status add(std::string name, Factory factory);
  const std::vector<std::string>& problems() const { return problems_; }
  std::vector<std::string> names() const;
  bool contains(std::string_view name) const;
  // A new backend, or null for an unknown name.
  std::unique_ptr<Backend> make(std::string_view name) const;
  // The factory registered under `name`, or null.
  const Factory* factory(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, Factory>> entries_;
  std::vector<std::string> problems_;
};

// Why `name` cannot name a backend, or empty: names are letters, digits and `._+-`, at
// most kMaxBackendName characters, so that they read the same in a shell line, a file
// name, a report and a --backend list.
inline constexpr size_t kMaxBackendName = 64;
std::string backend_name_problem(std::string_view name);

// The built-in backends of this build: reference (and the GPU backends when built).
Registry builtin_registry();

// Whether the backend registered as `name` is available: its available(), with an
// unknown name (not_found) or an exception thrown by its factory or available() (a
// plugin's bug, which must not end the run) turned into a Status that says so.
Status backend_available(const Registry& registry, std::string_view name);

// describe() of the backend's declared numerics, or why they could not be asked (an
// exception from its factory or numerics()).
std::string backend_numerics(const Registry& registry, std::string_view name);

}  // namespace kc
