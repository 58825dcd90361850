// What a report needs to say where its results came from: this build's version, the
// commit of the source tree it was built from, and the GPU its cuda backend would use.
#pragma once

#include <string>
#include <vector>

#include "kc/case.h"

namespace kc {

// The project version, e.g. "0.1.0".
std::string version();

// $KC_COMMIT when set (a binary run outside its checkout, e.g. a GPU bundle); else the
// commit of the source tree this build came from, "+dirty" with uncommitted changes to
// tracked files; else "unknown" (no git, or the tree is gone).
std::string source_commit();

// The first CUDA device as the cuda backend sees it ("NVIDIA H100 80GB HBM3 (sm_90,
// ...)"), "none: <reason>" without a usable one, or empty in a build without CUDA.
// Never initialises CUDA in this process (the probe runs in a child).
// Defined in kc_backends (builtin_backends.cpp), the library that links the GPU code.
std::string gpu_device_description();

// What the built-in backends that choose kernels per case would run for c, one line
// each (today cuda and cuda.direct: kc/gpu/backends.h), decided on the host; defined in
// kc_backends. kcheck explain prints them.
std::vector<std::string> builtin_kernel_plans(const Case& c);

// The versions of the peer libraries built in ("oneDNN 2.6.3"); empty when none is
// (kc_backends defines it too).
std::string peer_library_versions();

}  // namespace kc
