// The defaults of Engine (engine.h): an engine that cannot split the backward says so,
// and the bench times its whole conv_backward instead; one without average pooling says
// so too.
#include "engine.h"

namespace kc::gpu {
namespace {
Status no_split(const Engine& e, const char* part) {
  return unimplemented(e.name() + " computes " + part + " only inside its whole conv backward (dx, dw and db)");
}
}  // namespace

StatusOr<std::unique_ptr<Engine>> make_engine(const std::string& name) {
  if (name == "cuda") return make_cuda_engine(true);
  if (name == "cuda.direct") return make_cuda_engine(false);
#ifdef KC_HAVE_CUDNN
  if (name == "cudnn") return make_cudnn_engine();
  return not_found("no GPU engine \"" + name + "\" (cuda, cuda.direct, cudnn)");
#else
  return not_found("no GPU engine \"" + name + "\" in this build (cuda, cuda.direct; built without cuDNN)");
#endif
}

Status Engine::conv_backward_data(const ConvGeometry&, DType, const ConvIO&) { return no_split(*this, "dx"); }
Status Engine::conv_backward_weight(const ConvGeometry&, DType, const ConvIO&) { return no_split(*this, "dw"); }
Status Engine::conv_backward_bias(const ConvGeometry&, DType, const ConvIO&) { return no_split(*this, "db"); }
Status Engine::avgpool_forward(const AvgPoolGeometry&, DType, const PoolIO&) {
  return unimplemented("avgpool forward is not implemented by the " + name() + " engine");
}
Status Engine::avgpool_backward(const AvgPoolGeometry&, DType, const PoolIO&) {
  return unimplemented("avgpool backward is not implemented by the " + name() + " engine");
}

}  // namespace kc::gpu
