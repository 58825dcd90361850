// The kc_traps plugin: one backend "trap.<name>" per row of trap_list.h, each the trap
// zoo's direct conv, max and average pool (trap_conv.cpp, trap_pool.cpp) with one planted bug, and
// the control "trap.none", the same code with none. Load it with
//   kcheck run cases --plugin libkc_traps.so --backend trap.dw_mean
#include <memory>
#include <string>

#include "kc/plugin.h"
#include "support/counted_runner.h"
#include "support/f32_accumulation.h"
#include "trap_blind_spots.h"
#include "trap_conv.h"
#include "trap_index_width.h"
#include "trap_list.h"
#include "trap_numerics.h"
#include "trap_pool.h"

namespace kc::traps {
namespace {

// The traps whose bug is in a size: only they (and the controls) run the boundary sweep
// (cases/boundaries/), whose 858 cases would otherwise double the zoo's time on bugs that
// the rest of the corpus already catches.
bool plants_a_size_bug(Bug bug) {
  return is_index_width_trap(bug) || bug == Bug::kAvgDivisorU8 || bug == Bug::kBatchTailDropped ||
         bug == Bug::kChannelTileTail || bug == Bug::kOutChannelTileTail || bug == Bug::kExtentTileTail ||
         bug == Bug::kPlaneIndex15Bits || bug == Bug::kPoolWindowU8Offset;
}

bool in_boundary_sweep(const Case& c) { return c.source.find("boundaries/boundaries_") != std::string::npos; }

// The traps whose bug is planted only in convolution code (trap_conv.cpp, the numerics
// and the index-width traps): their max pooling is trap.none's. A bug left off the list
// runs every case, which costs time only.
bool plants_in_conv_only(Bug bug) {
  switch (bug) {
    case Bug::kValidForSame:
    case Bug::kSamePadWrongSide:
    case Bug::kPadHwSwapped:
    case Bug::kBorderUnwritten:
    case Bug::kDilationOffByOne:
    case Bug::kReflectRepeatsEdge:
    case Bug::kDxIgnoresStride:
    case Bug::kDwIgnoresGroups:
    case Bug::kDwLastPosition:
    case Bug::kDwMean:
    case Bug::kDwNoBatchSum:
    case Bug::kDwRace:
    case Bug::kDbNoBatchSum:
    case Bug::kDbPastEnd:
    case Bug::kDyChannelsLast:
    case Bug::kBorderGradientDropped:
    case Bug::kReluBeforeBias:
    case Bug::kReluGradAtZeroOne:
    case Bug::kWritesInput:
    case Bug::kRecomputeDiffers:
    case Bug::kLowPrecisionAccumulation:
    case Bug::kDoubledAccumulator:
    case Bug::kTruncatingConversion:
    case Bug::kOverflowPastMax:
    case Bug::kFtzFlushesNormals:
    case Bug::kSkipTapsDropsReal:
    case Bug::kWinogradTenTimes:
      return true;
    default:
      return is_index_width_trap(bug);
  }
}

class TrapBackend final : public Backend {
 public:
  TrapBackend(std::string name, Bug bug, std::string clean = "")
      : name_(std::move(name)), bug_(bug), clean_(std::move(clean)), blind_(bug) {}

  std::string name() const override { return name_; }

  // Remembers how the case wrote its padding: the resolved geometry does not say
  // whether it was `same` (see ConvSetup). The runner asks before every case.
  Status supports(const Case& c) const override {
    form_ = PadKind::kExplicit;
    if (const auto* p = std::get_if<ConvParams>(&c.op)) form_ = p->padding.kind;
    if (const auto* p = std::get_if<ConvBiasReluParams>(&c.op)) form_ = p->conv.padding.kind;
    blind_.set_form(form_);
    // A trap's bug lives in one op's kernels: on the other ops it would rerun the
    // oracle's code, at the cost of a whole corpus run. The avg_* traps run the pooling
    // cases (a max-pool case is the clean case of two of them), most pool_* traps max pools
    // and stacks (whose layers pool; trap_pool.h), the conv traps conv, conv_bias_relu and
    // stacks, the others every case but average pooling, which the controls (trap.none,
    // trap.f32_accumulation, trap.random_order_dw) run.
    if (bug_ != Bug::kNone && !plants_a_size_bug(bug_) && in_boundary_sweep(c)) {
      return unimplemented(name_ + " plants no size bug (the boundary sweep runs on the size traps)");
    }
    const bool avg_case = std::holds_alternative<AvgPoolParams>(c.op);
    if (bug_ != Bug::kNone && is_avgpool_trap(bug_) && !avg_case && !std::holds_alternative<MaxPoolParams>(c.op)) {
      return unimplemented(name_ + " plants its bug in average pooling only");
    }
    if (bug_ != Bug::kNone && !is_avgpool_trap(bug_) && avg_case) {
      return unimplemented(name_ + " has no bug in average pooling");
    }
    // A conv trap's max pooling is trap.none's: it runs a max pool only as its clean case,
    // where it must pass.
    if (plants_in_conv_only(bug_) && std::holds_alternative<MaxPoolParams>(c.op) &&
        (clean_.empty() || c.name.find(clean_) == std::string::npos)) {
      return unimplemented(name_ + " plants its bug in convolution only");
    }
    if (runs_max_pool_cases_only(bug_) &&
        (avg_case || std::holds_alternative<ConvParams>(c.op) || std::holds_alternative<ConvBiasReluParams>(c.op))) {
      return unimplemented(name_ + " plants its bug in max pooling only");
    }
    return ok_status();
  }

  Numerics numerics() const override { return trap_numerics(bug_); }
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (is_blind_spot_trap(bug_)) return blind_.conv_forward(g, x, w, b, relu, y);
    if (is_index_width_trap(bug_)) return index_width_conv_forward({bug_, form_}, g, x, w, b, relu, y);
    return trap_numerics_forward({bug_, form_}, g, x, w, b, relu, y);
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    if (is_blind_spot_trap(bug_)) return blind_.conv_backward(g, x, w, b, relu, dy, dx, dw, db);
    if (is_index_width_trap(bug_)) return index_width_conv_backward({bug_, form_}, g, x, w, b, relu, dy, dx, dw, db);
    return trap_conv_backward({bug_, form_}, g, x, w, b, relu, dy, dx, dw, db);
  }
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    if (is_blind_spot_trap(bug_)) return blind_.maxpool_forward(g, x, y, indices);
    if (bug_ == Bug::kPoolTieMask) x_ = x;  // its backward recomputes a mask from x
    return trap_pool_forward(bug_, g, x, y, indices);
  }
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    if (is_blind_spot_trap(bug_)) return blind_.maxpool_backward(g, dy, indices, dx);
    return trap_pool_backward(bug_, g, dy, indices, &x_, dx);
  }
  Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) override {
    return trap_avgpool_forward(bug_, g, x, y);
  }
  Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) override {
    return trap_avgpool_backward(bug_, g, dy, dx);
  }

 private:
  std::string name_;
  Bug bug_;
  std::string clean_;  // its clean case (trap_list.h): a substring of a case name
  mutable PadKind form_ = PadKind::kExplicit;
  Tensor x_;
  mutable BlindSpotTrap blind_;
};

// A backend that runs stacks resident in its own memory, as the GPU backends do, with
// one bug in the resident run (support/counted_runner.h): an allocator that never gives
// freed activations back (checkpointing recomputes as planned and gets every gradient
// right, but its measured peak does not shrink), per-layer argmax offsets indexed
// with the next layer's number, or a checkpoint used as workspace by the inference-path
// forward. Per-layer calls are the zoo's correct ones.
class ResidentRunner final : public Backend, public ResidentStackRunner {
 public:
  ResidentRunner(std::string name, test::CountedBug bug) : ops_(name, Bug::kNone), name_(std::move(name)), bug_(bug) {}
  std::string name() const override { return name_; }
  Status supports(const Case& c) const override { return ops_.supports(c); }
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    return ops_.conv_forward(g, x, w, b, relu, y);
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    return ops_.conv_backward(g, x, w, b, relu, dy, dx, dw, db);
  }
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    return ops_.maxpool_forward(g, x, y, indices);
  }
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    return ops_.maxpool_backward(g, dy, indices, dx);
  }
  Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) override {
    return ops_.avgpool_forward(g, x, y);
  }
  Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) override {
    return ops_.avgpool_backward(g, dy, dx);
  }
  StackRun run_stack_resident(const std::vector<StackLayer>& layers, const StackInputs& in,
                              const StackRunOptions& options) override {
    return test::run_counted(ops_, layers, in, options, bug_);
  }

 private:
  TrapBackend ops_;
  std::string name_;
  test::CountedBug bug_;
};

void add(Registry& r, const std::string& name, Bug bug, const std::string& clean = "") {
  const std::string full = "trap." + name;
  if (bug == Bug::kResidentMemoryLeak || bug == Bug::kResidentNextLayersIndices ||
      bug == Bug::kResidentCheckpointAsWorkspace) {
    const test::CountedBug b = bug == Bug::kResidentMemoryLeak          ? test::CountedBug::kLeak
                               : bug == Bug::kResidentNextLayersIndices ? test::CountedBug::kNextLayersIndices
                                                                        : test::CountedBug::kCheckpointAsWorkspace;
    (void)r.add(full, [full, b] { return std::make_unique<ResidentRunner>(full, b); });
    return;
  }
  (void)r.add(full, [full, bug, clean] { return std::make_unique<TrapBackend>(full, bug, clean); });
}

void register_traps(Registry& r) {
  add(r, "none", Bug::kNone);
  // The second control, no bug either: the oracle's results moved by errors the size of
  // f32 accumulation, as a correct f16/bf16 kernel with f32 accumulators computes them
  // (the checks that compare with the oracle in the case dtype must pass it).
  (void)r.add("trap.f32_accumulation", [] { return std::make_unique<test::F32Accumulation>("trap.f32_accumulation"); });
  (void)r.add("trap.random_order_dw",
              [] { return std::make_unique<test::F32Accumulation>("trap.random_order_dw", true); });
#define KC_TRAP_ADD(name, bug, check, diagnosis, clean) add(r, #name, Bug::bug, clean);
  KC_TRAPS(KC_TRAP_ADD)
#undef KC_TRAP_ADD
}

}  // namespace
}  // namespace kc::traps

KC_PLUGIN(kc::traps::register_traps)
