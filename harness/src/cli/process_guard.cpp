// kcheck's own process against the code it loads (docs/plugins.md, "Trust"): a plugin that
// calls exit() in kcheck's process (a backend's available() in the parent, any call under
// --in-process) would end the run with its status, 0 among them, before anything was
// reported; from guard_process() on, such an exit is exit 2 with a message. A fatal signal
// is named before the process dies of it. SIGPIPE is ignored: a reader of stdout that went
// away (`kcheck run ... | head`) must not cost the report, and the exit status still
// tells the verdict. Workers (forked) undo all of this for themselves.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "cli.h"
#include "core/fp_env.h"

namespace kc::cli {
namespace {

pid_t g_main_pid = 0;
volatile sig_atomic_t g_finished = 0;

void early_exit() {
  if (g_finished != 0 || getpid() != g_main_pid) return;
  static const char msg[] =
      "kcheck: exit() was called before the command finished (by plugin code running in kcheck's own process: "
      "a static initializer, a backend's factory, available() or, under --in-process, any call); nothing is "
      "reported; exit 2\n";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
  _exit(2);
}

void fatal_signal(int sig) {
  if (getpid() == g_main_pid) {
    const char* name = strsignal(sig);  // not async-signal-safe in theory; the process is ending anyway
    static const char head[] = "kcheck: fatal signal in kcheck's own process: ";
    (void)!write(STDERR_FILENO, head, sizeof head - 1);
    (void)!write(STDERR_FILENO, name, std::strlen(name));
    (void)!write(STDERR_FILENO, "\n", 1);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void guard_process() {
  g_main_pid = getpid();
  std::atexit(early_exit);
  signal(SIGPIPE, SIG_IGN);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, fatal_signal);
  pin_judge_fp_env();
}

int finished(int code) {
  g_finished = 1;
  return code;
}

}  // namespace kc::cli
