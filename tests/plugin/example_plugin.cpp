// A plugin for the end-to-end tests of --plugin: "example.correct" forwards to the
// reference, "example.scaled_dw" returns dw scaled by 0.5 (the weight-share and
// backward checks must catch it), "example.throws" throws from its forward,
// "example.throws_probe" from available() and "example.throws_name" from name() (an
// exception crossing the interface is a plugin bug: CRASHED for its case, unavailable
// for the probe, never the end of a run, --in-process too). Built with KC_EXAMPLE_BARE it is written to docs/plugins.md
// alone: it exports kc_register_backends and no kc_plugin_abi_version, and
// checks the ABI version it is given itself. "example.refuses_all" supports no case.
#include <chrono>
#include <stdexcept>
#include <thread>

#include "kc/plugin.h"

namespace {

// The reference's f64 values, stored as a kernel stores them: each output arrives in the
// case dtype and is rounded to it (76800 is inf in f16, an f64 sum is rounded in f32).
class Forwarding : public kc::Backend {
 public:
  explicit Forwarding(std::string name, double dw_scale) : name_(std::move(name)), dw_scale_(dw_scale) {}
  std::string name() const override { return name_; }
  kc::Status conv_forward(const kc::ConvGeometry& g, const kc::Tensor& x, const kc::Tensor& w, const kc::Tensor* b,
                          bool relu, kc::Tensor& y) override {
    const kc::DType dtype = y.dtype;
    KC_RETURN_IF_ERROR(ref_->conv_forward(g, x, w, b, relu, y));
    y.round_to_dtype(dtype);
    return kc::ok_status();
  }
  kc::Status conv_backward(const kc::ConvGeometry& g, const kc::Tensor& x, const kc::Tensor& w, const kc::Tensor* b,
                           bool relu, const kc::Tensor& dy, kc::Tensor& dx, kc::Tensor& dw, kc::Tensor* db) override {
    const kc::DType dtype = dx.dtype;
    KC_RETURN_IF_ERROR(ref_->conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    for (double& v : dw.data) v *= dw_scale_;
    dx.round_to_dtype(dtype);
    dw.round_to_dtype(dtype);
    if (db != nullptr) db->round_to_dtype(dtype);
    return kc::ok_status();
  }
  kc::Status maxpool_forward(const kc::PoolGeometry& g, const kc::Tensor& x, kc::Tensor& y,
                             kc::IndexTensor* indices) override {
    const kc::DType dtype = y.dtype;
    KC_RETURN_IF_ERROR(ref_->maxpool_forward(g, x, y, indices));
    y.round_to_dtype(dtype);
    return kc::ok_status();
  }
  kc::Status maxpool_backward(const kc::PoolGeometry& g, const kc::Tensor& dy, const kc::IndexTensor* indices,
                              kc::Tensor& dx) override {
    const kc::DType dtype = dx.dtype;
    KC_RETURN_IF_ERROR(ref_->maxpool_backward(g, dy, indices, dx));
    dx.round_to_dtype(dtype);
    return kc::ok_status();
  }

 private:
  std::string name_;
  double dw_scale_;
  std::unique_ptr<kc::Backend> ref_ = kc::make_reference_backend();
};

class Throws final : public Forwarding {
 public:
  explicit Throws(std::string name, bool in_probe) : Forwarding(std::move(name), 1.0), in_probe_(in_probe) {}
  kc::Status available() const override {
    if (in_probe_) throw std::runtime_error("example probe throws");
    return kc::ok_status();
  }
  kc::Status conv_forward(const kc::ConvGeometry&, const kc::Tensor&, const kc::Tensor&, const kc::Tensor*, bool,
                          kc::Tensor&) override {
    throw std::runtime_error("example forward throws");
  }

 private:
  bool in_probe_;
};

// Refuses every case: a run on it checks nothing, which must never look like a pass.
class RefusesAll final : public Forwarding {
 public:
  RefusesAll() : Forwarding("example.refuses_all", 1.0) {}
  kc::Status supports(const kc::Case&) const override { return kc::unimplemented("example.refuses_all runs nothing"); }
};

// Runs f32 2-D plain convolutions with zero padding and one group only, as a narrow
// kernel does: what fuzzing must steer to.
class F32Conv2d final : public Forwarding {
 public:
  F32Conv2d() : Forwarding("example.f32_conv2d", 1.0) {}
  kc::Status supports(const kc::Case& c) const override {
    const auto* conv = std::get_if<kc::ConvParams>(&c.op);
    if (conv == nullptr || c.dtype != kc::DType::kF32 || c.input.spatial.size() != 2 || conv->groups != 1 ||
        conv->padding_mode != kc::PaddingMode::kZeros) {
      return kc::unimplemented("example.f32_conv2d runs f32 2-D conv with one group and zero padding only");
    }
    return kc::ok_status();
  }
};

// Never returns from a conv forward: the run must not wait the timeout on every case.
class Hangs final : public Forwarding {
 public:
  Hangs() : Forwarding("example.hangs", 1.0) {}
  kc::Status conv_forward(const kc::ConvGeometry&, const kc::Tensor&, const kc::Tensor&, const kc::Tensor*, bool,
                          kc::Tensor&) override {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
};

class ThrowsName final : public Forwarding {
 public:
  ThrowsName() : Forwarding("example.throws_name", 1.0) {}
  std::string name() const override { throw std::runtime_error("example name throws"); }
};

void register_examples(kc::Registry& r) {
  (void)r.add("example.correct", [] { return std::make_unique<Forwarding>("example.correct", 1.0); });
  (void)r.add("example.scaled_dw", [] { return std::make_unique<Forwarding>("example.scaled_dw", 0.5); });
  (void)r.add("example.throws", [] { return std::make_unique<Throws>("example.throws", false); });
  (void)r.add("example.throws_probe", [] { return std::make_unique<Throws>("example.throws_probe", true); });
  (void)r.add("example.throws_name", [] { return std::make_unique<ThrowsName>(); });
  (void)r.add("example.refuses_all", [] { return std::make_unique<RefusesAll>(); });
  (void)r.add("example.f32_conv2d", [] { return std::make_unique<F32Conv2d>(); });
  (void)r.add("example.hangs", [] { return std::make_unique<Hangs>(); });
}

}  // namespace

#ifdef KC_EXAMPLE_BARE
extern "C" int kc_register_backends(kc::Registry* registry, int abi_version) {
  if (registry == nullptr || abi_version != KC_PLUGIN_ABI_VERSION) return 1;
  register_examples(*registry);
  return 0;
}
#else
KC_PLUGIN(register_examples)
#endif
