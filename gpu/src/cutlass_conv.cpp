// The CUTLASS engine's path (cutlass_conv.h): the choice per pass (cutlass/kernel_catalog.h),
// the channels-last copies (layout_map.h) around each kernel, and its scratch, guard-banded
// like the direct kernels'. Weights are copied per call, as cuDNN is given them.
#include <array>
#include <initializer_list>
#include <optional>

#include "cutlass/kernel_catalog.h"
#include "cutlass_conv.h"
#include "kc/gpu/cutlass_problem.h"
#include "kc/gpu/device_buffer.h"
#include "kc/gpu/host_convert.h"
#include "kc/gpu/kernels.h"
#include "kc/gpu/layout_map.h"

namespace kc::gpu {
namespace {

using cutlass_engine::Choice;
using cutlass_engine::Element;
using cutlass_engine::Epilogue;

std::optional<Element> element_of(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return Element::kF32;
    case DType::kF16:
      return Element::kF16;
    case DType::kBF16:
      return Element::kBf16;
    default:
      return std::nullopt;
  }
}

// The choice for one pass, or the reason none applies.
Choice choose(const ConvGeometry& g, DType dtype, ConvPass pass, Epilogue epi = Epilogue::kLinear) {
  Choice c;
  const std::optional<Element> e = element_of(dtype);
  if (!e) {
    c.why = "no CUTLASS kernel for " + std::string(dtype_name(dtype));
    return c;
  }
  StatusOr<ImplicitGemmProblem> p = implicit_gemm_problem(g);
  if (!p.ok()) {
    c.why = p.status().message();
    return c;
  }
  return cutlass_engine::choose_kernel(*p, *e, pass, epi);
}

std::string plan_line(const Choice& c) { return c.chosen() ? "cutlass " + c.name() : "direct: " + c.why; }

Choice refused(std::string why) {
  Choice c;
  c.why = std::move(why);
  return c;
}

// What the backward takes: dgrad and wgrad (those asked for), and for the fused op the
// pre-activation kernel, only where the forward's bias + relu kernel is CUTLASS's in the
// same tile (the same mainloop, so relu' is the forward's decision); else the direct
// kernels mask dy and run every pass.
struct BackwardChoice {
  Choice data, weight, z;
};
BackwardChoice backward_choice(const ConvGeometry& g, DType dtype, bool relu, bool dx, bool dw) {
  BackwardChoice b{dx ? choose(g, dtype, ConvPass::kDgrad) : Choice{},
                   dw ? choose(g, dtype, ConvPass::kWgrad) : Choice{}, Choice{}};
  if (!relu) return b;
  const Choice forward = choose(g, dtype, ConvPass::kFprop, Epilogue::kBiasRelu);
  b.z = choose(g, dtype, ConvPass::kFprop, Epilogue::kPreActivation);
  if (!forward.chosen()) b.z = refused("the forward is direct (" + forward.why + ")");
  if (b.z.chosen() && b.z.kernel->tile != forward.kernel->tile) b.z = refused("the forward runs another tile");
  if (!b.z.chosen()) {
    const std::string why = "the fused op's relu mask runs on the direct kernels: " + b.z.why;
    if (dx) b.data = refused(why);
    if (dw) b.weight = refused(why);
  }
  return b;
}

// The three tensors of a conv as outer x channels x spatial blocks (layout_map.h).
LayoutShape x_layout(const ConvGeometry& g) { return {g.batch, g.in_channels, g.spatial.in_count()}; }
LayoutShape y_layout(const ConvGeometry& g) { return {g.batch, g.out_channels, g.spatial.out_count()}; }
LayoutShape w_layout(const ConvGeometry& g) { return {g.out_channels, g.in_per_group(), g.spatial.kernel_count()}; }

class CutlassConvImpl final : public CutlassConv {
 public:
  explicit CutlassConvImpl(std::function<void(const std::string&)> note) : note_(std::move(note)) {}
  Status forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, bool* took) override;
  Status backward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, void* dz, Taken* t) override;
  Status check_guards() const override {
    for (const DeviceBuffer* b : buffers()) KC_RETURN_IF_ERROR(b->check_guards());
    return ok_status();
  }
  void release_scratch() override {
    for (DeviceBuffer* b : {&x_, &w_, &y_, &z_, &dx_, &dw_, &workspace_}) *b = DeviceBuffer{};
  }
  int64_t scratch_bytes() const override {
    int64_t n = 0;
    for (const DeviceBuffer* b : buffers()) n += b->bytes();
    return n;
  }

 private:
  std::array<const DeviceBuffer*, 7> buffers() const { return {&x_, &w_, &y_, &z_, &dx_, &dw_, &workspace_}; }
  // y_ (dy channels-last) masked by relu' of z + b, z recomputed in f32; dz channels-first.
  Status mask(const Choice& z, const ConvGeometry& g, DType dtype, const ConvIO& io, void* dz);
  // Copies src into `buffer` channels-last (grown to fit).
  Status to_last(DeviceBuffer& buffer, const char* name, DType dtype, const LayoutShape& s, const void* src) {
    KC_RETURN_IF_ERROR(ensure_size(buffer, s.size() * device_bytes(dtype), name));
    return launch_to_channels_last(dtype, s, src, buffer.data());
  }
  Status run(const Choice& c, const cutlass_engine::Operands& o) {
    const ImplicitGemmProblem& p = problem_;
    KC_RETURN_IF_ERROR(
        ensure_size(workspace_, static_cast<int64_t>(c.kernel->workspace_bytes(p)), "CUTLASS workspace"));
    note_("cutlass " + c.name() + " (+ channels-last copies)");
    return c.kernel->run(p, o, workspace_.data());
  }

  std::function<void(const std::string&)> note_;
  ImplicitGemmProblem problem_;  // of the call in progress
  DeviceBuffer x_, w_, y_, z_, dx_, dw_, workspace_;
};

Status CutlassConvImpl::forward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, bool* took) {
  *took = false;
  const Choice c = choose(g, dtype, ConvPass::kFprop, relu ? Epilogue::kBiasRelu : Epilogue::kLinear);
  if (!c.chosen()) return ok_status();
  problem_ = *implicit_gemm_problem(g);
  KC_RETURN_IF_ERROR(to_last(x_, "x (channels-last)", dtype, x_layout(g), io.x));
  KC_RETURN_IF_ERROR(to_last(w_, "w (KRSC)", dtype, w_layout(g), io.w));
  KC_RETURN_IF_ERROR(ensure_size(y_, y_layout(g).size() * device_bytes(dtype), "y (channels-last)"));
  KC_RETURN_IF_ERROR(run(c, {x_.data(), w_.data(), io.b, y_.data()}));
  KC_RETURN_IF_ERROR(launch_to_channels_first(dtype, y_layout(g), y_.data(), io.y));
  *took = true;
  return ok_status();
}

Status CutlassConvImpl::mask(const Choice& z, const ConvGeometry& g, DType dtype, const ConvIO& io, void* dz) {
  KC_RETURN_IF_ERROR(to_last(x_, "x (channels-last)", dtype, x_layout(g), io.x));
  KC_RETURN_IF_ERROR(to_last(w_, "w (KRSC)", dtype, w_layout(g), io.w));
  KC_RETURN_IF_ERROR(ensure_size(z_, y_layout(g).size() * 4, "z (pre-activation, channels-last, f32)"));
  KC_RETURN_IF_ERROR(run(z, {x_.data(), w_.data(), nullptr, z_.data()}));
  KC_RETURN_IF_ERROR(launch_relu_mask_channels_last(dtype, y_layout(g).size(), g.out_channels,
                                                    static_cast<const float*>(z_.data()), io.b, y_.data()));
  return launch_to_channels_first(dtype, y_layout(g), y_.data(), dz);
}

Status CutlassConvImpl::backward(const ConvGeometry& g, DType dtype, bool relu, const ConvIO& io, void* dz, Taken* t) {
  *t = Taken{};
  const BackwardChoice b = backward_choice(g, dtype, relu, io.dx != nullptr, io.dw != nullptr);
  const Choice &data = b.data, &weight = b.weight, &z = b.z;
  if (relu ? !z.chosen() : !data.chosen() && !weight.chosen()) return ok_status();
  problem_ = *implicit_gemm_problem(g);
  KC_RETURN_IF_ERROR(to_last(y_, "dy (channels-last)", dtype, y_layout(g), io.dy));  // once for every pass
  if (relu) KC_RETURN_IF_ERROR(mask(z, g, dtype, io, dz));
  t->masked = relu;
  if (data.chosen()) {
    if (!relu) KC_RETURN_IF_ERROR(to_last(w_, "w (KRSC)", dtype, w_layout(g), io.w));  // else mask made it
    KC_RETURN_IF_ERROR(ensure_size(dx_, x_layout(g).size() * device_bytes(dtype), "dx (channels-last)"));
    KC_RETURN_IF_ERROR(run(data, {y_.data(), w_.data(), nullptr, dx_.data()}));
    KC_RETURN_IF_ERROR(launch_to_channels_first(dtype, x_layout(g), dx_.data(), io.dx));
    t->dx = true;
  }
  if (weight.chosen()) {
    if (!relu) KC_RETURN_IF_ERROR(to_last(x_, "x (channels-last)", dtype, x_layout(g), io.x));
    KC_RETURN_IF_ERROR(ensure_size(dw_, w_layout(g).size() * 4, "dw (KRSC, f32)"));
    KC_RETURN_IF_ERROR(run(weight, {y_.data(), x_.data(), nullptr, dw_.data()}));
    KC_RETURN_IF_ERROR(
        launch_to_channels_first_rounded(dtype, w_layout(g), static_cast<const float*>(dw_.data()), io.dw));
    t->dw = true;
  }
  return ok_status();
}

}  // namespace

ConvPassPlan cutlass_plan(const ConvGeometry& g, DType dtype, bool relu) {
  const BackwardChoice b = backward_choice(g, dtype, relu, true, true);
  return {plan_line(choose(g, dtype, ConvPass::kFprop, relu ? Epilogue::kBiasRelu : Epilogue::kLinear)),
          plan_line(b.data), plan_line(b.weight), relu ? plan_line(b.z) : ""};
}

std::unique_ptr<CutlassConv> make_cutlass_conv(std::function<void(const std::string&)> note) {
  return std::make_unique<CutlassConvImpl>(std::move(note));
}

}  // namespace kc::gpu
