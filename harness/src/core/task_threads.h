// The threads one task may use for independent work inside a check (gradcheck's
// probes), set by the worker isolation (run/isolate.h) for its forked workers.
#pragma once

namespace kc {

// One per core by default; run_tasks gives each of its forked workers cores / jobs (at
// least one; jobs counts no more workers than tasks), so that `kcheck run --jobs N`
// does not run N times the cores.
int task_threads();

// Sets what task_threads() returns: n threads, or one per core for n <= 0 (the default).
void set_task_threads(int n);

// The cores of this machine (at least one).
int task_cores();

// Gives the OpenMP runtime loaded in this process, if any, n threads (at least one): a
// worker's share of the cores. A backend whose library runs on OpenMP (oneDNN from
// Debian's packages does) otherwise runs a thread per core in each of --jobs workers, and
// OpenMP threads that spin while they wait make that oversubscription many times slower.
// False when no OpenMP runtime is loaded.
bool limit_openmp_threads(int n);

}  // namespace kc
