// build_info.h: version and source commit (git, read through popen); the GPU description
// is builtin_backends.cpp's, which links the GPU code.
#include "backend/build_info.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace kc {
namespace {

// The first line a shell command prints, without its newline; empty when it fails.
std::string first_line(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen((command + " 2>/dev/null").c_str(), "r"), pclose);
  if (!p) return {};
  std::array<char, 256> buf{};
  std::string line = std::fgets(buf.data(), buf.size(), p.get()) ? buf.data() : "";
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

}  // namespace

std::string version() { return KC_VERSION; }

std::string source_commit() {
  if (const char* env = std::getenv("KC_COMMIT"); env != nullptr && *env != '\0') return env;
  const std::string git = "git --no-optional-locks -C '" KC_SOURCE_DIR "' ";  // never takes the index lock
  const std::string commit = first_line(git + "rev-parse HEAD");
  if (commit.empty()) return "unknown";
  // "clean" only when git status itself succeeds and lists nothing
  const std::string state = first_line(git + "status --porcelain --untracked-files=no && echo clean");
  return state == "clean" ? commit : commit + "+dirty";
}

}  // namespace kc
