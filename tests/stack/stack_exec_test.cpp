// The calling contract of backend.h inside a stack: the executor (stack_exec.cpp) checks
// every layer call's buffers as `integrity` checks a single op's, and a breach fails the
// stack run named by layer, call and buffer. The planted-bug backends are the single-op
// integrity tests' own (rules_support.h); each computes right values, so only the
// contract check can catch it.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "checks/rules_support.h"
#include "stack/stack_exec.h"

namespace kc::rules_test {
namespace {

// depth 3 of a same-padded 3x3 conv with bias and relu, then a 2x2 max pool when asked.
Case small_stack(bool pool) {
  Case c;
  c.name = "stack integrity";
  c.dtype = DType::kF64;
  c.input = {2, 2, {8, 8}};
  StackParams p;
  p.depth = pool ? 2 : 3;
  p.conv.out_channels = 3;
  p.conv.kernel = {3, 3};
  p.conv.padding.kind = PadKind::kSame;
  p.conv.bias = true;
  p.relu = true;
  if (pool) p.pool = MaxPoolParams{.kernel = {2, 2}};
  p.checkpoint = {CheckpointKind::kSqrt, 0};
  c.op = p;
  c.data.seed = 5;
  c.deterministic = true;
  return c;
}

StackRun run(Backend& be, const Case& c) {
  auto layers = stack_layers(c);
  EXPECT_TRUE(layers.ok()) << layers.status().to_string();
  auto in = make_stack_inputs(c, *layers);
  EXPECT_TRUE(in.ok()) << in.status().to_string();
  return run_stack(be, *layers, *in, {std::get<StackParams>(c.op).checkpoint, c.dtype, true, false});
}

struct Planted {
  std::shared_ptr<Backend> backend;
  bool pool;
  std::string says;  // in the run's status
};

TEST(StackIntegrity, EveryBreachOfTheCallingContractFailsTheRunNamingLayerCallAndBuffer) {
  const std::vector<Planted> planted = {
      {std::make_shared<WritesPastTheEnd>(), false,
       "conv_forward: y: the guard band around the buffer was overwritten: 8 bytes after the last element"},
      {std::make_shared<ReplacesOutputBuffer>(), false,
       "conv_forward: y: the backend replaced or resized the buffer it was given"},
      {std::make_shared<ResizesOutput>(), false, "conv_forward: y: the backend replaced or resized"},
      {std::make_shared<WritesIntoInput>(), false, "conv_forward: x: the backend wrote into this input"},
      {std::make_shared<SkipsLastColumn>(), false, "conv_forward: y: 48 of 384 elements never written"},
      {std::make_shared<PoolWritesBeforeStart>(), true,
       "maxpool_backward: dx: the guard band around the buffer was overwritten: 8 bytes before the first"},
      {std::make_shared<PoolKeepsNoIndices>(), true, "maxpool_forward: indices: 96 of 96 elements never written"},
  };
  for (const Planted& p : planted) {
    SCOPED_TRACE(p.backend->name());
    const StackRun r = run(*p.backend, small_stack(p.pool));
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.message().find("stack layer "), std::string::npos) << r.status.to_string();
    EXPECT_NE(r.status.message().find(p.says), std::string::npos) << r.status.to_string();
  }
}

// The same backends' honest parent, and the reference, pass the audit.
TEST(StackIntegrity, CorrectBackendsPassTheAudit) {
  DelegatingBackend honest("honest");
  for (bool pool : {false, true}) {
    EXPECT_TRUE(run(honest, small_stack(pool)).status.ok()) << run(honest, small_stack(pool)).status.to_string();
    EXPECT_TRUE(run(*make_reference_backend(), small_stack(pool)).status.ok());
  }
}

// Engines written for inference, where a layer's input (and a pool's argmax) is dead
// once the next layer has run: each call uses the previous call's buffer as its
// workspace. In training that buffer is the record the backward needs, and no call is
// handed it to write, so only the schedule's fingerprints of its records can see it.
// (Checkpoint none keeps every record alive through the forward pass.)
class RecyclesThePreviousInput final : public DelegatingBackend {
 public:
  RecyclesThePreviousInput() : DelegatingBackend("recycles-the-previous-input") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (previous_ != nullptr) std::fill(previous_->data.begin(), previous_->data.end(), 0.0);
    previous_ = const_cast<Tensor*>(&x);
    return reference().conv_forward(g, x, w, b, relu, y);
  }

 private:
  Tensor* previous_ = nullptr;
};

class RecyclesThePreviousArgmax final : public DelegatingBackend {
 public:
  RecyclesThePreviousArgmax() : DelegatingBackend("recycles-the-previous-argmax") {}
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    if (previous_ != nullptr) std::fill(previous_->data.begin(), previous_->data.end(), int64_t{0});
    previous_ = indices;
    return reference().maxpool_forward(g, x, y, indices);
  }

 private:
  IndexTensor* previous_ = nullptr;
};

// The pool's forward uses its own layer's conv input as workspace: that input is dead
// once the conv has run, in inference. The record is fingerprinted when it is stored,
// before the layer's calls, so this is caught too.
class PoolRecyclesTheConvInput final : public DelegatingBackend {
 public:
  PoolRecyclesTheConvInput() : DelegatingBackend("pool-recycles-the-conv-input") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    conv_input_ = const_cast<Tensor*>(&x);
    return reference().conv_forward(g, x, w, b, relu, y);
  }
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    if (conv_input_ != nullptr) std::fill(conv_input_->data.begin(), conv_input_->data.end(), 0.0);
    return reference().maxpool_forward(g, x, y, indices);
  }

 private:
  Tensor* conv_input_ = nullptr;
};

TEST(StackIntegrity, AWriteIntoASavedRecordNoCallWasHandedFailsTheRun) {
  for (bool pool : {false, true}) {
    Case c = small_stack(pool);
    std::get<StackParams>(c.op).checkpoint = {CheckpointKind::kNone, 0};
    std::unique_ptr<Backend> be;
    if (pool) {
      be = std::make_unique<RecyclesThePreviousArgmax>();
    } else {
      be = std::make_unique<RecyclesThePreviousInput>();
    }
    const StackRun r = run(*be, c);
    ASSERT_FALSE(r.status.ok()) << be->name();
    // Layers count from 1. Depth 3: layer 3's forward zeroed layer 2's input (the first
    // record the backward reads back); depth 2 with a pool: layer 2's pool zeroed layer 1's argmax.
    const std::string says = pool ? "stack layer 1: the saved max pool's argmax kept for its backward changed"
                                  : "stack layer 2: the saved input kept for its backward changed";
    EXPECT_NE(r.status.message().find(says), std::string::npos) << r.status.to_string();
    EXPECT_NE(r.status.message().find("a call wrote into a buffer it was not handed"), std::string::npos);
  }
  // sqrt on depth 2 keeps both layers' records as one segment; none keeps them too.
  for (CheckpointKind kind : {CheckpointKind::kNone, CheckpointKind::kSqrt}) {
    Case c = small_stack(true);
    std::get<StackParams>(c.op).checkpoint = {kind, 0};
    PoolRecyclesTheConvInput be;
    const StackRun r = run(be, c);
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.message().find("stack layer 2: the saved input kept for its backward changed"),
              std::string::npos)
        << r.status.to_string();
  }
}

// The stack's input is layer 1's checkpoint under sqrt (depth 3 is segments [1, 2] and
// [3]): an engine that takes it for dead once layer 2 has run, and uses it as
// workspace, is seen when the recomputation of layers 1..2 reads it back.
class RecyclesTheStackInput final : public DelegatingBackend {
 public:
  RecyclesTheStackInput() : DelegatingBackend("recycles-the-stack-input") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (++calls_ == 1) first_ = const_cast<Tensor*>(&x);
    if (calls_ == 2) std::fill(first_->data.begin(), first_->data.end(), 0.0);
    return reference().conv_forward(g, x, w, b, relu, y);
  }

 private:
  int calls_ = 0;
  Tensor* first_ = nullptr;
};

// An engine that takes a backward's dx for dead once it has been handed back, and uses
// it as the next forward's workspace: with checkpointing that dx is the cotangent held
// while the earlier segment is recomputed. Without recomputation no forward follows a
// backward, and the same engine is right.
class RecyclesTheLastDx final : public DelegatingBackend {
 public:
  RecyclesTheLastDx() : DelegatingBackend("recycles-the-last-dx") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (dx_ != nullptr) std::fill(dx_, dx_ + dx_size_, 0.0);
    dx_ = nullptr;
    return reference().conv_forward(g, x, w, b, relu, y);
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    dx_ = dx.data.data();  // the storage the schedule moves into its cotangent
    dx_size_ = static_cast<size_t>(dx.size());
    return reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db);
  }

 private:
  double* dx_ = nullptr;
  size_t dx_size_ = 0;
};

// Engines that scribble on another layer's weights: `early`, layer 2's forward writes
// into layer 1's, before layer 1's backward reads them again; late, layer 1's backward
// (the last call) writes into layer 3's, after their last use.
class WritesAnotherLayersWeights final : public DelegatingBackend {
 public:
  explicit WritesAnotherLayersWeights(bool early) : DelegatingBackend("writes-another-layers-weights"), early_(early) {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (first_ == nullptr) first_ = const_cast<Tensor*>(&w);
    if (early_ && &w != first_) first_->data[0] += 1.0;
    last_ = const_cast<Tensor*>(&w);
    return reference().conv_forward(g, x, w, b, relu, y);
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    if (!early_ && &w == first_) last_->data[0] += 1.0;
    return ok_status();
  }

 private:
  bool early_;
  Tensor* first_ = nullptr;
  Tensor* last_ = nullptr;
};

TEST(StackIntegrity, AWriteIntoTheCheckpointCotangentOrParametersNoCallWasHandedFailsTheRun) {
  const Case sqrt3 = small_stack(false);  // depth 3, sqrt: segments [1, 2] and [3]
  Case none3 = sqrt3;
  std::get<StackParams>(none3.op).checkpoint = {CheckpointKind::kNone, 0};
  {
    RecyclesTheStackInput be;
    const StackRun r = run(be, sqrt3);
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.message().find("stack layer 1: the saved input kept for its recomputation changed"),
              std::string::npos)
        << r.status.to_string();
  }
  {
    RecyclesTheLastDx be;
    const StackRun r = run(be, sqrt3);
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.message().find("stack layer 2: the cotangent of its output, held for its backward, changed "
                                      "while layers 1..2 were recomputed"),
              std::string::npos)
        << r.status.to_string();
    RecyclesTheLastDx control;
    EXPECT_TRUE(run(control, none3).status.ok()) << run(control, none3).status.to_string();
  }
  for (bool early : {true, false}) {
    SCOPED_TRACE(early ? "early" : "after the last use");
    WritesAnotherLayersWeights be(early);
    const StackRun r = run(be, none3);
    ASSERT_FALSE(r.status.ok());
    const std::string says = early ? "stack layer 1: its weights (w) changed during the run, before its "
                                     "conv_backward read them"
                                   : "stack layer 3: its weights (w) changed during the run, after their last use";
    EXPECT_NE(r.status.message().find(says), std::string::npos) << r.status.to_string();
  }
}

// Through the runner: every stack check reports the breach (here, db written one element
// past its end in each backward, as trap.db_past_end does).
class DbPastTheEnd final : public DelegatingBackend {
 public:
  DbPastTheEnd() : DelegatingBackend("db-past-the-end") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    if (db != nullptr) db->data.data()[db->size()] = 0.0;
    return ok_status();
  }
};

TEST(StackIntegrity, TheRunnerFailsEveryStackCheckOnAnOverrun) {
  DbPastTheEnd be;
  const CaseResult r = check_case(small_stack(false), be);
  EXPECT_EQ(r.disposition, Disposition::kFailed);
  for (const char* name : {"backward", "checkpoint", "influence"}) {
    const CheckResult* c = find_check(r, name);
    ASSERT_TRUE(c) << name;
    EXPECT_EQ(c->disposition, Disposition::kFailed) << c->message;
    EXPECT_NE(c->message.find("stack layer 3: conv_backward: db: the guard band around the buffer was overwritten"),
              std::string::npos)
        << c->message;
  }
}

}  // namespace
}  // namespace kc::rules_test
