// A prepared op of the oneDNN peers (kc/prepared_op.h), in the manner of benchdnn: a
// sequence of primitives with their arguments, all made by prepare(). run() executes the
// sequence on the op's own in-order stream and waits; nothing is created, converted or
// reordered there. One scratchpad (user mode), as large as the largest step asks, is
// shared by the steps, which never run at the same time. outputs() converts the memories
// the last run wrote back to plain host tensors.
#pragma once

#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "kc/prepared_op.h"
#include "onednn_memory.h"

namespace kc::onednn {

// Reads the last run's results; may throw dnnl::error (outputs() guards it).
using OutputReader = std::function<PreparedOutputs(Context&)>;

// Collects the steps of one op and the memories it holds, then makes the PreparedOp.
class PreparedBuilder {
 public:
  explicit PreparedBuilder(Context ctx) : ctx_(std::move(ctx)) {}
  Context& context() { return ctx_; }

  // Counts m in held_bytes (inputs, outputs, intermediates), once per buffer.
  memory hold(memory m);
  // A new memory of desc d, held.
  memory make(const memory::desc& d) { return hold(memory(d, ctx_.engine)); }
  // A pool workspace: counted in workspace_bytes.
  memory workspace(const memory::desc& d);

  // A primitive made from pd; label names it in algorithm() when the op has several.
  void add(const std::string& label, const dnnl::primitive_desc_base& pd, dnnl::primitive p,
           std::unordered_map<int, memory> args);
  // from into to's layout, inside the run (the two differ).
  void add_reorder(const memory& from, const memory& to);

  std::unique_ptr<PreparedOp> build(OutputReader read);

 private:
  struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, memory> args;
    memory::desc scratchpad;  // zero size: none
  };

  Context ctx_;
  std::vector<Step> steps_;
  std::vector<void*> held_buffers_;
  std::vector<std::string> labels_, impls_;
  MemoryUse use_;
};

}  // namespace kc::onednn
