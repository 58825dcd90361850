// Registry of backends by name.
#include "kc/registry.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>

#include "backend/candidate_call.h"

namespace kc {
namespace {

bool allowed_in_name(unsigned char c) { return std::isalnum(c) != 0 || c == '.' || c == '_' || c == '+' || c == '-'; }

// The start of a name as it can be printed: other bytes as \xNN, long names cut.
std::string shown_name(std::string_view name) {
  std::string shown;
  for (unsigned char c : name.substr(0, 80)) {
    if (c >= 0x20 && c < 0x7f) {
      shown += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      shown += hex;
    }
  }
  return name.size() > 80 ? shown + "..." : shown;
}

}  // namespace

std::string backend_name_problem(std::string_view name) {
  if (name.empty()) return "a backend name is empty";
  if (!std::all_of(name.begin(), name.end(), [](char c) { return allowed_in_name(static_cast<unsigned char>(c)); })) {
    return "backend name \"" + shown_name(name) + "\" may hold only letters, digits and ._+-";
  }
  if (name.size() > kMaxBackendName) {
    return "backend name \"" + shown_name(name) + "\" is " + std::to_string(name.size()) + " characters long, over " +
           std::to_string(kMaxBackendName);
  }
  return {};
}

Status Registry::add(std::string name, Factory factory) {
  std::string why = backend_name_problem(name);
  if (why.empty() && contains(name)) why = "backend \"" + name + "\" is registered twice";
  if (!why.empty()) {
    problems_.push_back(why);
    return invalid_argument(why);
  }
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
    if (!b) return {};
    std::string text = describe(b->numerics());
    // What its library's loading left (-ffast-math: FTZ/DAZ) is the environment its calls run in.
    if (const std::string env = describe_fp_env(candidate_fp_env(std::string(name))); !env.empty()) {
      text += "; runs with " + env + " (set when its library loaded)";
    }
    return text;
  } catch (const std::exception& e) {
    return std::string("unknown: its numerics() threw: ") + e.what();
  } catch (...) {
    return "unknown: its numerics() threw a non-standard exception";
  }
}

}  // namespace kc
