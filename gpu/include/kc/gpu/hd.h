// KC_HD marks the small functions that host C++ (tests, planners) and CUDA device code
// share: index mappings, tiling arithmetic, argmax offsets. Under nvcc they compile for
// both sides; under a plain C++ compiler they are ordinary inline functions, so the same
// arithmetic the kernels run is unit-tested on the CPU.
#pragma once

#if defined(__CUDACC__)
#define KC_HD __host__ __device__ __forceinline__
#else
#define KC_HD inline
#endif
