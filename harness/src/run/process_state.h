// ProcessState: what a task run in kcheck's own process (--in-process, run/isolate.h)
// may not change for the tasks after it or for the report: the working directory, the
// environment, the floating-point environment. Taken before the task, put back after it.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/fp_env.h"

extern char** environ;

namespace kc {

class ProcessState {
 public:
  ProcessState() : cwd_(open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env_.emplace_back(*e);
  }
  ~ProcessState() {
    if (cwd_ >= 0) {
      if (fchdir(cwd_) != 0) std::perror("kcheck: cannot return to the working directory");
      close(cwd_);
    }
    clearenv();
    for (const std::string& kv : env_) {
      const size_t eq = kv.find('=');
      if (eq != std::string::npos && eq > 0) setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1);
    }
    pin_judge_fp_env();
  }
  ProcessState(const ProcessState&) = delete;
  ProcessState& operator=(const ProcessState&) = delete;

 private:
  int cwd_;
  std::vector<std::string> env_;
};

}  // namespace kc
