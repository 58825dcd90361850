// The text of kcheck explain shared by the ops (cli/explain_text.h).
#include "cli/explain_text.h"

#include <algorithm>
#include <cstdio>

namespace kc::cli {

std::string mib(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes >= 1024.0) bytes /= 1024.0, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

void print_dims(const SpatialGeometry& g) {
  std::printf("  %-4s %6s %6s %6s %6s %9s %6s %9s %8s\n", "dim", "in", "kernel", "stride", "dilat", "pad lo/hi", "out",
              "receptive", "erosion");
  for (size_t i = 0; i < g.dims.size(); ++i) {
    const DimGeometry& d = g.dims[i];
    // Erosion: input positions with no output centred over them, i.e. in - out*stride
    // (0 for SAME with stride 1; d*(k-1) for valid).
    const long long erosion = std::max<long long>(0, d.in - d.out * d.stride);
    std::printf("  %-4zu %6lld %6lld %6lld %6lld %4lld/%-4lld %6lld %9lld %8lld\n", i, (long long)d.in,
                (long long)d.kernel, (long long)d.stride, (long long)d.dilation, (long long)d.pad_lo,
                (long long)d.pad_hi, (long long)d.out, (long long)d.extent(), erosion);
  }
}

}  // namespace kc::cli
