// PreparedBuilder and the PreparedOp it makes. Errors inside run() and outputs() (oneDNN
// throws) become Status values here, at the interface.
#include "prepared_primitives.h"

#include <algorithm>

#include "onednn_status.h"

namespace kc::onednn {
namespace {

class PreparedPrimitives final : public PreparedOp {
 public:
  struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
  };

  PreparedPrimitives(Context ctx, std::vector<Step> steps, dnnl::memory scratchpad, MemoryUse use,
                     std::string algorithm, OutputReader read)
      : ctx_(std::move(ctx)),
        steps_(std::move(steps)),
        scratchpad_(std::move(scratchpad)),
        use_(use),
        algorithm_(std::move(algorithm)),
        read_(std::move(read)) {}

  Status run() override {
    return guarded("prepared run", [&] {
      for (const Step& s : steps_) s.primitive.execute(ctx_.stream, s.args);
      ctx_.stream.wait();  // a CPU stream: the host clock around run() is the op's time
      return ok_status();
    });
  }
  StatusOr<PreparedOutputs> outputs() const override {
    PreparedOutputs out;
    const Status s = guarded("prepared outputs", [&] {
      out = read_(ctx_);
      return ok_status();
    });
    if (!s.ok()) return s;
    return out;
  }
  MemoryUse memory() const override { return use_; }
  std::string algorithm() const override { return algorithm_; }
  std::string device() const override { return "cpu"; }

 private:
  mutable Context ctx_;  // outputs() reorders on the stream; the handles are shared
  std::vector<Step> steps_;
  dnnl::memory scratchpad_;  // kept alive: the steps' scratchpad memories alias it
  MemoryUse use_;
  std::string algorithm_;
  OutputReader read_;
};

}  // namespace

memory PreparedBuilder::hold(memory m) {
  void* h = m.get_data_handle();
  if (std::find(held_buffers_.begin(), held_buffers_.end(), h) == held_buffers_.end()) {
    held_buffers_.push_back(h);
    use_.held_bytes += static_cast<int64_t>(m.get_desc().get_size());
  }
  return m;
}

memory PreparedBuilder::workspace(const memory::desc& d) {
  use_.workspace_bytes += static_cast<int64_t>(d.get_size());
  return memory(d, ctx_.engine);
}

void PreparedBuilder::add(const std::string& label, const dnnl::primitive_desc_base& pd, dnnl::primitive p,
                          std::unordered_map<int, memory> args) {
  steps_.push_back({std::move(p), std::move(args), pd.scratchpad_desc()});
  labels_.push_back(label);
  impls_.push_back(pd.impl_info_str());
}

void PreparedBuilder::add_reorder(const memory& from, const memory& to) {
  steps_.push_back({dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, memory::desc()});
}

std::unique_ptr<PreparedOp> PreparedBuilder::build(OutputReader read) {
  size_t scratch = 0;
  for (const Step& s : steps_) scratch = std::max(scratch, s.scratchpad.get_size());
  memory shared;
  if (scratch > 0)
    shared = memory({{static_cast<memory::dim>(scratch)}, memory::data_type::u8, memory::format_tag::a}, ctx_.engine);
  use_.workspace_bytes += static_cast<int64_t>(scratch);
  std::vector<PreparedPrimitives::Step> steps;
  for (Step& s : steps_) {
    // Each step sees the shared buffer through its own scratchpad desc.
    if (s.scratchpad.get_size() > 0)
      s.args[DNNL_ARG_SCRATCHPAD] = memory(s.scratchpad, ctx_.engine, shared.get_data_handle());
    steps.push_back({std::move(s.primitive), std::move(s.args)});
  }
  std::string algorithm;
  for (size_t i = 0; i < impls_.size(); ++i) {
    if (!algorithm.empty()) algorithm += ", ";
    algorithm += impls_.size() == 1 ? impls_[i] : labels_[i] + " " + impls_[i];
  }
  return std::make_unique<PreparedPrimitives>(ctx_, std::move(steps), std::move(shared), use_, std::move(algorithm),
                                              std::move(read));
}

}  // namespace kc::onednn
