#include "bench/rss.h"

#include <fstream>
#include <string>

namespace kc::bench {
namespace {

int64_t status_field(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    try {
      return std::stoll(line.substr(key.size() + 1)) * 1024;  // "VmHWM:   1234 kB"
    } catch (...) {
      return -1;
    }
  }
  return -1;
}

}  // namespace

bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

int64_t peak_rss_bytes() { return status_field("VmHWM"); }
int64_t current_rss_bytes() { return status_field("VmRSS"); }

}  // namespace kc::bench
