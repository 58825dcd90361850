// Small helpers shared by the kcheck commands.
#include <charconv>
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

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace kc::cli
