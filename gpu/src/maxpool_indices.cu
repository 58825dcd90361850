// Max-pool argmax at the interface (pool_shape.h): compact window offsets expand to the
// int64 flat plane index the harness sees, and an int64 index coming back for the
// backward is compressed to the offset of the tap it names. An index that is no tap of
// its own window cannot be routed by the gather, so it is refused, never dropped.
#include <climits>
#include <cstdint>

#include "dtype_traits.cuh"
#include "kc/gpu/device_buffer.h"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void expand_kernel(PoolShape s, const void* offsets, int bytes, int64_t* __restrict__ indices) {
  const long long total = static_cast<long long>(s.planes) * s.out_count();
  const int sentinel = offset_sentinel(bytes);
  for (long long e = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * kThreads) {
    const int off = bytes == 1 ? static_cast<const uint8_t*>(offsets)[e] : static_cast<const uint16_t*>(offsets)[e];
    const int o = static_cast<int>(e % s.out_count());
    indices[e] = off == sentinel ? static_cast<int64_t>(LLONG_MIN) : offset_to_index(s, o, off);
  }
}

__global__ void compress_kernel(PoolShape s, const int64_t* __restrict__ indices, void* offsets, int bytes,
                                unsigned long long* first_bad) {
  const long long total = static_cast<long long>(s.planes) * s.out_count();
  for (long long e = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * kThreads) {
    int off = index_to_offset(s, static_cast<int>(e % s.out_count()), indices[e]);
    if (off < 0) {
      atomicMin(first_bad, static_cast<unsigned long long>(e));  // integer: order-free
      off = offset_sentinel(bytes);
    }
    if (bytes == 1) {
      static_cast<uint8_t*>(offsets)[e] = static_cast<uint8_t>(off);
    } else {
      static_cast<uint16_t*>(offsets)[e] = static_cast<uint16_t>(off);
    }
  }
}

}  // namespace

Status launch_maxpool_expand_indices(const PoolShape& s, const void* offsets, int offset_bytes, int64_t* indices) {
  const long long total = static_cast<long long>(s.planes) * s.out_count();
  expand_kernel<<<detail::blocks_for(total, kThreads), kThreads, 0, detail::launch_stream()>>>(s, offsets, offset_bytes,
                                                                                               indices);
  return detail::launch_status("maxpool expand indices");
}

Status launch_maxpool_compress_indices(const PoolShape& s, const int64_t* indices, void* offsets, int offset_bytes) {
  const long long total = static_cast<long long>(s.planes) * s.out_count();
  // The first bad element's position: a guarded, accounted buffer like any other.
  KC_ASSIGN_OR_RETURN(DeviceBuffer flag, DeviceBuffer::allocate(sizeof(unsigned long long), "maxpool first bad index"));
  const unsigned long long none = ULLONG_MAX;
  unsigned long long bad = none;
  KC_RETURN_IF_ERROR(flag.upload(&none, sizeof(none)));
  auto* first_bad = static_cast<unsigned long long*>(flag.data());
  compress_kernel<<<detail::blocks_for(total, kThreads), kThreads, 0, detail::launch_stream()>>>(
      s, indices, offsets, offset_bytes, first_bad);
  KC_RETURN_IF_ERROR(detail::launch_status("maxpool compress indices"));
  KC_RETURN_IF_ERROR(flag.download(&bad, sizeof(bad)));
  KC_RETURN_IF_ERROR(flag.check_guards());
  if (bad == none) return ok_status();
  int64_t value = 0;
  KC_RETURN_IF_ERROR(detail::cuda_status(cudaMemcpy(&value, indices + bad, sizeof(value), cudaMemcpyDeviceToHost),
                                         "maxpool compress indices"));
  return out_of_range("maxpool indices: element " + std::to_string(bad) + " is " + std::to_string(value) +
                      ", which is no position inside its own window (in the unpadded plane of " +
                      std::to_string(s.in_count()) + " elements)");
}

}  // namespace kc::gpu
