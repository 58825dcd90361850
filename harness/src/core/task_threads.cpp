// task_threads(): a process-wide count, read by the checks and set by run_tasks.
#include "core/task_threads.h"

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

}  // namespace kc
