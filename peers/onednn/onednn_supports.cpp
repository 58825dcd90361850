// supports() of the oneDNN peers.
#include "onednn_supports.h"

#include <string>

#include "kc/onednn/backends.h"
#include "kc/shape.h"
#include "onednn_memory.h"
#include "onednn_pool.h"
#include "onednn_status.h"

namespace kc::onednn {
namespace {

Status case_rules(const Case& c) {
  if (c.dtype == DType::kF64) return unimplemented("f64 storage: oneDNN has no f64 convolution or pooling");
  if (c.accumulation && *c.accumulation != DType::kF32) {
    return unimplemented("accumulation: " + std::string(dtype_name(*c.accumulation)) +
                         ": oneDNN accumulates f32, bf16 and f16 data in f32");
  }
  if (const auto* pool = std::get_if<MaxPoolParams>(&c.op); pool && pool->tie == TieRule::kLast) {
    return unimplemented(
        "maxpool tie: last: oneDNN's max pooling keeps the first maximum of a window (it replaces the running "
        "maximum only on a strictly greater value), so it runs tie: first and tie: any");
  }
  const ConvParams* conv = std::get_if<ConvParams>(&c.op);
  if (const auto* fused = std::get_if<ConvBiasReluParams>(&c.op)) conv = &fused->conv;
  if (conv != nullptr && conv->padding_mode != PaddingMode::kZeros) {
    return unimplemented("padding_mode " + std::string(padding_mode_name(conv->padding_mode)) +
                         ": oneDNN pads with zeros only");
  }
  return ok_status();
}

// Why oneDNN had no implementation, in the user's terms.
std::string no_implementation(const Case& c, Flavor flavor) {
  const bool conv = !std::holds_alternative<MaxPoolParams>(c.op) && !std::holds_alternative<AvgPoolParams>(c.op);
  const std::string op = conv                                          ? "convolution"
                         : std::holds_alternative<MaxPoolParams>(c.op) ? "max pooling"
                                                                       : "average pooling";
  const std::string lib = library_version();
  if (conv && flavor == Flavor::kWinograd) {
    return lib + " cannot run this convolution as Winograd (its jit_wino_4x3 F(4,3) takes f32 2-D convolutions " +
           "with 3x3 kernels, stride 1, no dilation and one group)";
  }
  if (c.dtype == DType::kBF16) return "this CPU has no bf16 " + op + " in " + lib + " for this case";
  if (c.dtype == DType::kF16) return "this CPU has no f16 " + op + " in " + lib;
  return lib + " has no implementation of this " + op;
}

Status ask_onednn(const Case& c, Flavor flavor, const dnnl::engine& engine) {
  const memory::data_type type = *data_type(c.dtype);
  if (const auto* p = std::get_if<MaxPoolParams>(&c.op)) {
    const StatusOr<PoolGeometry> g = pool_geometry(c);
    if (!g.ok()) return ok_status();  // invalid: the runner says so
    return guarded("max pooling", [&] {
      (void)make_pool_plan(engine, *g, type, pool_flavor(flavor), p->mode == PoolMode::kTraining);
      return ok_status();
    });
  }
  if (std::holds_alternative<AvgPoolParams>(c.op)) {
    const StatusOr<AvgPoolGeometry> g = avgpool_geometry(c);
    if (!g.ok()) return ok_status();
    return guarded("average pooling", [&] {
      (void)make_avgpool_plan(engine, *g, type, pool_flavor(flavor));
      return ok_status();
    });
  }
  const StatusOr<ConvGeometry> g = conv_geometry(c);
  if (!g.ok()) return ok_status();
  return guarded("convolution", [&] {
    (void)make_conv_plan(engine, *g, type, flavor, std::holds_alternative<ConvBiasReluParams>(c.op));
    return ok_status();
  });
}

// oneDNN 2.6.3's AVX-512 bf16 max pool loses or misroutes the argmax of windows of 256
// taps or more: with AVX512-BF16 or AMX (its avx512_core_bf16 kernel) on every layout, a
// bf16 17x17 global max on 2 x 3 planes has 2 of 6 indices pointing away from the
// maximum, and the indices of a 256-tap window differ from call to call (-1 in some);
// with avx512_core alone its blocked layouts lose the gradient of a window. A run that
// varies from call to call no waiver could hold (waivers.yaml, section 9): refused on
// every AVX-512 CPU, saying so.
Status bf16_wide_max_pool_gap(const Case& c) {
  if (c.dtype != DType::kBF16 || !std::holds_alternative<MaxPoolParams>(c.op)) return ok_status();
  const StatusOr<PoolGeometry> g = pool_geometry(c);
  if (!g.ok() || g->spatial.kernel_count() < 256) return ok_status();
  const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
  const int avx512 = static_cast<int>(dnnl::cpu_isa::avx512_core);
  if ((isa & avx512) != avx512) return ok_status();
  return unimplemented("bf16 max pooling over " + std::to_string(g->spatial.kernel_count()) +
                       " taps: oneDNN 2.6.3's AVX-512 kernels lose or misroute argmaxes from 256 taps on");
}

// Whether oneDNN runs its AMX kernels here (AVX-512 with AMX, not capped below it).
bool runs_amx() {
  const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
  const int amx = static_cast<int>(dnnl::cpu_isa::avx512_core_amx);
  return (isa & amx) == amx;
}

// Whether some element of x is read by no window: a stride past the window's extent, or
// trailing elements past the last window.
bool leaves_inputs_unread(const SpatialGeometry& s) {
  for (const DimGeometry& d : s.dims) {
    if (d.stride > d.extent() || (d.out - 1) * d.stride + d.extent() < d.padded()) return true;
  }
  return false;
}

// oneDNN 2.6.3's AMX bf16 convolution backward (jit:avx512_core_amx_bf16) leaves dx
// unwritten at the input elements no window reads: on a 15x13x21 input under 2x2x2
// windows of stride 2, 90 of 4095 elements hold whatever the buffer held (3.7e19, or a
// value from an earlier call) where the contract says 0. What it leaves varies from call
// to call, so no waiver could hold it (waivers.yaml, section 9): refused on CPUs with
// AMX, saying so.
Status amx_bf16_unread_dx_gap(const Case& c) {
  if (c.dtype != DType::kBF16 || is_stack(c)) return ok_status();
  const StatusOr<ConvGeometry> g = conv_geometry(c);  // not ok: a pool, or invalid
  if (!g.ok() || !leaves_inputs_unread(g->spatial)) return ok_status();
  if (!runs_amx()) return ok_status();
  return unimplemented(
      "bf16 convolution whose windows leave input elements unread: oneDNN 2.6.3's AMX backward leaves dx unwritten "
      "there");
}

// Whether some filter tap reads only padding: no output position puts it inside the input.
bool has_padding_only_tap(const SpatialGeometry& s) {
  for (const DimGeometry& d : s.dims) {
    for (int64_t t = 0; t < d.kernel; ++t) {
      bool reads = false;
      for (int64_t p = 0; p < d.out && !reads; ++p) {
        const int64_t i = p * d.stride + t * d.dilation - d.pad_lo;
        reads = i >= 0 && i < d.in;
      }
      if (!reads) return true;
    }
  }
  return false;
}

// The same AMX kernels' bf16 backward weights (jit:avx512_core_amx_bf16, which the blocked
// flavor gets; onednn.plain's gemm does not) leave dw unwritten at a filter tap that reads
// only padding, where the contract says 0: a 16 -> 8 channel 3x3 same conv on a 6x1 input
// gives dw up to 1.6e60 there, or another call's values (the state and weight_share checks
// name it); channels 8 fail alike, the 6x3 input (no such tap) and f32 pass. It varies
// from call to call: refused with AMX, saying so.
Status amx_bf16_padding_tap_dw_gap(const Case& c, Flavor flavor) {
  if (c.dtype != DType::kBF16 || flavor != Flavor::kAny || is_stack(c)) return ok_status();
  const StatusOr<ConvGeometry> g = conv_geometry(c);
  if (!g.ok() || !has_padding_only_tap(g->spatial)) return ok_status();
  if (!runs_amx()) return ok_status();
  return unimplemented(
      "bf16 convolution with a filter tap that reads only padding: oneDNN 2.6.3's AMX backward weights leave dw "
      "unwritten there");
}

}  // namespace

Status onednn_supports(const Case& c, Flavor flavor, const dnnl::engine& engine) {
  if (is_stack(c)) return ok_status();  // each layer's case is asked on its own
  KC_RETURN_IF_ERROR(case_rules(c));
  KC_RETURN_IF_ERROR(bf16_wide_max_pool_gap(c));
  KC_RETURN_IF_ERROR(amx_bf16_unread_dx_gap(c));
  KC_RETURN_IF_ERROR(amx_bf16_padding_tap_dw_gap(c, flavor));
  if (std::holds_alternative<AvgPoolParams>(c.op)) {  // before oneDNN is asked: it would run these
    const StatusOr<AvgPoolGeometry> g = avgpool_geometry(c);
    if (g.ok()) KC_RETURN_IF_ERROR(avgpool_contract_gap(*g));
  }
  const Status s = ask_onednn(c, flavor, engine);
  if (s.code() != StatusCode::kUnimplemented) return s;
  return unimplemented(no_implementation(c, flavor) + " (" + s.message() + ")");
}

}  // namespace kc::onednn
