// The worker threads of oneDNN's CPU runtime. Debian's libdnnl runs on OpenMP (libgomp),
// whose thread pool does not survive fork(): a child forked after the parent ran a
// oneDNN primitive waits on threads that are not there (each parallel region stalls or
// hangs). kcheck bench measures ceilings in its parent and then forks its workers, so
// whatever runs oneDNN in a process that may fork releases the pool afterwards.
#pragma once

namespace kc::onednn {

// Ends the OpenMP runtime's threads (omp_pause_resource_all(omp_pause_hard)); the next
// primitive starts new ones. Nothing happens with another runtime or an OpenMP older
// than 5.0.
void release_cpu_threads();

}  // namespace kc::onednn
