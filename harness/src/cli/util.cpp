// Small helpers shared by the kcheck commands.
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "cli.h"
#include "kc/build_info.h"
#include "kc/report.h"

namespace kc::cli {

std::optional<uint64_t> parse_uint(const std::string& text) {
  uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_seconds(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v > 0) || !(v < 1e9)) return std::nullopt;
  return v;
}

void add_build_info(RunInfo& info, const std::vector<std::string>& backends) {
  info.extra["kc_version"] = version();
  info.extra["kc_commit"] = source_commit();
  for (const std::string& b : backends) {
    if (b != "cuda" && b != "cudnn") continue;
    if (const std::string gpu = gpu_device_description(); !gpu.empty()) info.extra["device"] = gpu;
    break;
  }
}

bool write_text_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

std::string output_file_problem(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) return flag + ": expected a file name, got ''";
  if (fs::is_directory(path, ec)) return flag + ": '" + path + "' is a folder; give a file name";
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  // The nearest folder that exists: the missing ones below it are created on writing.
  while (!fs::exists(parent, ec) && parent.has_parent_path() && parent != parent.parent_path()) {
    parent = parent.parent_path();
  }
  if (fs::exists(parent, ec) && !fs::is_directory(parent, ec)) {
    return flag + ": '" + parent.string() + "' is not a folder, so '" + path + "' cannot be written";
  }
  if (::access(parent.c_str(), W_OK) != 0) return flag + ": cannot write in '" + parent.string() + "'";
  return {};
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace kc::cli
