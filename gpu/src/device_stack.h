// The GPU backends' resident stack run (kc::ResidentStackRunner, stack_run.h): the
// whole training step of a stack on the device, its memory measured. Internal to kc_gpu.
#pragma once

#include <vector>

#include "engine.h"
#include "ops/stack/stack_runs.h"

namespace kc::gpu {

// The engine must be available and the dtype one it runs (f32, f16, bf16).
StackRun run_device_stack(Engine& engine, const std::vector<StackLayer>& layers, const StackInputs& in,
                          const StackRunOptions& options);

}  // namespace kc::gpu
