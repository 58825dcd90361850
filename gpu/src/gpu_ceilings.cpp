// measure_gpu_ceilings (ceilings.h). Each ceiling: one untimed warm-up, then the best of
// kReps runs, each timed alone by CUDA events on the default stream. The operands are
// filled with the byte 0x3C: a normal, non-zero value in every dtype (f16 1.06, bf16 and
// f32 0.0115, f64 1.6e-18), since zeros would let the hardware idle and inflate the
// ceiling, and the f16 sums stay far from overflow (8192 * 1.06^2 < 65504).
#include <cstdio>
#include <mutex>
#include <string>

#include "cublas_api.h"
#include "kc/gpu/ceilings.h"
#include "kc/gpu/device.h"
#include "kc/gpu/device_buffer.h"
#include "kc/gpu/kernels.h"

namespace kc::gpu {
namespace {

constexpr int kReps = 5;
constexpr int64_t kCopyBytes = int64_t{1} << 30;  // far beyond any L2 (H100: 50 MiB)
constexpr int kGemmSize = 8192;                   // square; large enough to saturate an H100/H200

std::vector<std::string>& notes() {
  static std::vector<std::string> n;
  return n;
}

// The best time of kReps runs of `launch` after one warm-up.
template <class Launch>
StatusOr<double> best_seconds(Launch launch) {
  KC_RETURN_IF_ERROR(launch());
  KC_RETURN_IF_ERROR(device_synchronize("ceiling warm-up"));
  EventTimer timer;
  double best = 0.0;
  for (int i = 0; i < kReps; ++i) {
    KC_RETURN_IF_ERROR(timer.start());
    KC_RETURN_IF_ERROR(launch());
    KC_RETURN_IF_ERROR(timer.stop());
    KC_ASSIGN_OR_RETURN(double s, timer.seconds());
    if (i == 0 || s < best) best = s;
  }
  if (best <= 0.0) return internal_error("CUDA events measured no time");
  return best;
}

StatusOr<Ceiling> copy_ceiling() {
  KC_ASSIGN_OR_RETURN(DeviceBuffer src, DeviceBuffer::allocate(kCopyBytes, "copy source"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer dst, DeviceBuffer::allocate(kCopyBytes, "copy destination"));
  KC_RETURN_IF_ERROR(src.fill(0x3C));
  KC_ASSIGN_OR_RETURN(double s, best_seconds([&] { return launch_device_copy(dst.data(), src.data(), kCopyBytes); }));
  Ceiling c;
  c.name = "d2d copy";
  c.device = "gpu";
  c.flops = false;
  c.per_second = 2.0 * static_cast<double>(kCopyBytes) / s;  // read once, written once
  c.detail = "cudaMemcpyAsync device to device, 1 GiB (2 GiB moved), best of " + std::to_string(kReps);
  return c;
}

struct GemmType {
  DType dtype;
  cudaDataType data;
  cublasComputeType_t compute;
  int bytes;
  const char* how;
};

GemmType gemm_type(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return {dtype, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, "f16 in/out, f32 accumulation, tensor cores"};
    case DType::kBF16:
      return {dtype, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, "bf16 in/out, f32 accumulation, tensor cores"};
    case DType::kF64:
      return {dtype, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, "f64"};
    default:
      return {DType::kF32, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, "f32, no TF32 (as our f32 kernels)"};
  }
}

StatusOr<Ceiling> gemm_ceiling(const CublasApi& api, cublasHandle_t handle, DType dtype) {
  const GemmType t = gemm_type(dtype);
  const int n = kGemmSize;
  const int64_t bytes = int64_t{n} * n * t.bytes;
  KC_ASSIGN_OR_RETURN(DeviceBuffer a, DeviceBuffer::allocate(bytes, "gemm A"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::allocate(bytes, "gemm B"));
  KC_ASSIGN_OR_RETURN(DeviceBuffer c, DeviceBuffer::allocate(bytes, "gemm C"));
  KC_RETURN_IF_ERROR(a.fill(0x3C));
  KC_RETURN_IF_ERROR(b.fill(0x3C));
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = dtype == DType::kF64;
  auto gemm = [&] {
    return cublas_status(
        api,
        api.gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, f64 ? static_cast<const void*>(&one_d) : &one_f,
                    a.data(), t.data, n, b.data(), t.data, n, f64 ? static_cast<const void*>(&zero_d) : &zero_f,
                    c.data(), t.data, n, t.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  };
  KC_ASSIGN_OR_RETURN(double s, best_seconds(gemm));
  Ceiling r;
  r.name = std::string("cublas gemm ") + std::string(dtype_name(dtype));
  r.device = "gpu";
  r.dtype = dtype;
  r.per_second = 2.0 * n * static_cast<double>(n) * n / s;
  r.detail = std::to_string(n) + "^3 cublasGemmEx (" + t.how + "), best of " + std::to_string(kReps);
  return r;
}

void gemm_ceilings(std::vector<Ceiling>& out) {
  auto api = cublas_api();
  if (!api.ok()) {
    notes().push_back("cublas gemm: " + api.status().message());
    return;
  }
  cublasHandle_t handle = nullptr;
  if (Status s = cublas_status(**api, (*api)->create(&handle), "cublasCreate"); !s.ok()) {
    notes().push_back("cublas gemm: " + s.message());
    return;
  }
  // Default math: no TF32 for f32; f16 and bf16 use tensor cores regardless.
  (void)(*api)->set_math_mode(handle, CUBLAS_DEFAULT_MATH);
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    StatusOr<Ceiling> c = gemm_ceiling(**api, handle, d);
    if (c.ok()) {
      out.push_back(*c);
    } else {
      notes().push_back("cublas gemm " + std::string(dtype_name(d)) + ": " + c.status().message());
    }
  }
  (*api)->destroy(handle);
}

StatusOr<std::vector<Ceiling>> measure() {
  KC_RETURN_IF_ERROR(probe_device().status());
  std::vector<Ceiling> out;
  StatusOr<Ceiling> copy = copy_ceiling();
  if (copy.ok()) {
    out.push_back(*copy);
  } else {
    notes().push_back("d2d copy: " + copy.status().message());
  }
  gemm_ceilings(out);
  for (const std::string& n : notes()) std::fprintf(stderr, "gpu ceilings: left out %s\n", n.c_str());
  if (out.empty()) return unavailable("no GPU ceiling could be measured: " + notes().front());
  return out;
}

}  // namespace

StatusOr<std::vector<Ceiling>> measure_gpu_ceilings() {
  static std::once_flag once;
  static StatusOr<std::vector<Ceiling>> result = unavailable("not measured");
  std::call_once(once, [] { result = measure(); });
  return result;
}

std::vector<std::string> gpu_ceiling_notes() { return notes(); }

}  // namespace kc::gpu
