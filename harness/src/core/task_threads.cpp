// task_threads(): a process-wide count, read by the checks and set by run_tasks.
#include "core/task_threads.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace kc {
namespace {

std::atomic<int> g_task_threads{0};  // 0: one per core

}  // namespace

int task_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

int task_threads() {
  const int n = g_task_threads.load();
  return n > 0 ? n : task_cores();
}

void set_task_threads(int n) { g_task_threads = std::max(0, n); }

bool limit_openmp_threads(int n) {
  // Looked up, not linked: kcheck itself uses no OpenMP, a backend's library may.
  using SetThreads = void (*)(int);
  auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set == nullptr) return false;
  set(std::max(1, n));
  return true;
}

}  // namespace kc
