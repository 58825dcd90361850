// The pause is looked up in the process (libdnnl brought libgomp in), so that kc_onednn
// needs no OpenMP build dependency of its own.
#include "openmp_threads.h"

#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.hpp>

namespace kc::onednn {

void release_cpu_threads() {
  if (dnnl_version()->cpu_runtime != DNNL_RUNTIME_OMP) return;
  using Pause = int (*)(int);
  constexpr int kOmpPauseHard = 2;  // omp_pause_resource_t::omp_pause_hard
  if (auto pause = reinterpret_cast<Pause>(dlsym(RTLD_DEFAULT, "omp_pause_resource_all"))) (void)pause(kOmpPauseHard);
}

}  // namespace kc::onednn
