// Small helpers shared by the kcheck commands.

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "backend/build_info.h"
#include "cli.h"
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
  if (text.empty() || end != text.c_str() + text.size() || !(v > 0) || !(v < kMaxSeconds)) return std::nullopt;
  return v;
}

std::string parse_seconds_option(const std::string& flag, const std::string& text, double& seconds) {
  const auto t = parse_seconds(text);
  if (!t) return flag + ": expected a positive number of seconds less than 1e9, got '" + text + "'";
  seconds = *t;
  return {};
}

std::string parse_jobs(const std::string& text, int& jobs) {
  const auto n = parse_uint(text);
  if (!n || *n == 0 || *n > kMaxJobs) {
    return "--jobs: expected an integer from 1 to " + std::to_string(kMaxJobs) + ", got '" + text + "'";
  }
  jobs = static_cast<int>(*n);
  return {};
}

std::string parse_count_option(const std::string& flag, const std::string& text, int& count) {
  const auto n = parse_uint(text);
  if (!n || *n > 1000000000) return flag + ": expected an integer from 0 to 1e9, got '" + text + "'";
  count = static_cast<int>(*n);
  return {};
}

std::string given_twice(std::set<std::string>& seen, const std::string& flag, const std::string& hint) {
  if (seen.insert(flag).second) return {};
  return flag + ": given twice; give it once" + (hint.empty() ? "" : " (" + hint + ")");
}

void add_build_info(RunInfo& info, const std::vector<std::string>& backends) {
  info.extra["kc_version"] = version();
  info.extra["kc_commit"] = source_commit();
  info.extra["host_cores"] = std::to_string(std::thread::hardware_concurrency());
  if (std::ifstream cpuinfo("/proc/cpuinfo"); cpuinfo) {
    for (std::string line; std::getline(cpuinfo, line);) {
      if (line.rfind("model name", 0) != 0 || line.find(':') == std::string::npos) continue;
      info.extra["host_cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  }
  for (const std::string& b : backends) {
    if (b != "cuda" && b != "cuda.direct" && b != "cudnn") continue;
    if (const std::string gpu = gpu_device_description(); !gpu.empty()) info.extra["device"] = gpu;
    break;
  }
}

std::string write_text_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    std::filesystem::create_directories(parent, ec);
    if (ec) return "cannot create its folder: " + ec.message();
  }
  errno = 0;
  std::ofstream f(path, std::ios::binary);
  if (!f) return errno ? std::strerror(errno) : "cannot open it";
  f << text;
  f.close();
  if (!f) return errno ? std::strerror(errno) : "an I/O error";
  return {};
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (1 to 4), 0 when there is none.
size_t utf8_length(std::string_view text, size_t i, uint32_t& code) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = b(0);
  const size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  code = n == 1 ? lead : lead & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    code = code << 6 | (b(k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};  // shortest forms only
  return code >= kMin[n] && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? n : 0;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t code = 0;
    const size_t n = utf8_length(text, i, code);
    // C0 controls but newline and tab, DEL, C1 controls (U+0080..U+009F: U+009B is a
    // CSI on some terminals) and bytes that are not UTF-8 are escaped byte by byte.
    const bool control = (code < 0x20 && code != '\n' && code != '\t') || (code >= 0x7f && code <= 0x9f);
    if (n > 0 && !control) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i + k]));
      out += buf;
    }
    i += std::max<size_t>(n, 1);
  }
  return out;
}

bool wants_help(const Args& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

std::string in_process_timeout_problem() {
  return "--timeout cannot be used with --in-process: a case checked in kcheck's own process cannot be stopped, "
         "so it would not be timed out; leave out one of the two";
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace kc::cli
