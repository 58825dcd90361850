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

}  // namespace

Status onednn_supports(const Case& c, Flavor flavor, const dnnl::engine& engine) {
  if (is_stack(c)) return ok_status();  // each layer's case is asked on its own
  KC_RETURN_IF_ERROR(case_rules(c));
  if (std::holds_alternative<AvgPoolParams>(c.op)) {  // before oneDNN is asked: it would run these
    const StatusOr<AvgPoolGeometry> g = avgpool_geometry(c);
    if (g.ok()) KC_RETURN_IF_ERROR(avgpool_contract_gap(*g));
  }
  const Status s = ask_onednn(c, flavor, engine);
  if (s.code() != StatusCode::kUnimplemented) return s;
  return unimplemented(no_implementation(c, flavor) + " (" + s.message() + ")");
}

}  // namespace kc::onednn
