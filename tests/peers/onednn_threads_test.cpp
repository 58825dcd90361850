// oneDNN from Debian's packages runs on OpenMP: a worker gives it its share of the cores
// (core/task_threads.h), which limit_openmp_threads sets in the runtime that is loaded.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "core/task_threads.h"

namespace kc {
namespace {

TEST(OneDnnThreads, AWorkerGivesOpenMpItsShareOfTheCores) {
  using Get = int (*)();
  auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  if (get == nullptr) GTEST_SKIP() << "this oneDNN does not run on an OpenMP runtime";
  ASSERT_TRUE(limit_openmp_threads(1));
  EXPECT_EQ(get(), 1);
  ASSERT_TRUE(limit_openmp_threads(0));  // at least one
  EXPECT_EQ(get(), 1);
  ASSERT_TRUE(limit_openmp_threads(task_cores()));
  EXPECT_EQ(get(), task_cores());
}

}  // namespace
}  // namespace kc
