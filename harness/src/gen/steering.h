// Fuzzing that fits the backend: before a batch is checked, the backend's own supports()
// says which of a wider draw it runs (asked in a worker process, as every backend call
// is), and the batch is filled with those, so that a narrow plugin (f32 2-D conv only)
// gets cases it runs instead of a stream of SKIPPED. The draws passed over are counted.
#pragma once

#include <string>
#include <vector>

#include "kc/case.h"
#include "kc/registry.h"
#include "run/isolate.h"

namespace kc::fuzz {

// A task that answers, for each case, '1' when `backend` supports it (or its geometry
// does not resolve: the runner reports that as INVALID) and '0' when it refuses it, as
// the message of its result.
IsolatedTask supports_probe(const Registry& registry, const std::string& backend, std::vector<Case> cases);

// The probe's answer for `count` cases, or empty when the probe did not answer (it
// crashed, or timed out): then nothing is passed over.
std::string probe_answer(const CaseResult& r, size_t count);

}  // namespace kc::fuzz
