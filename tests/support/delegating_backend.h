// A backend that forwards every call to the reference (or to another backend); a test
// overrides one method to plant one bug, and the check under test must catch it.
#pragma once

#include <memory>
#include <string>

#include "kc/backend.h"

namespace kc::test {

class DelegatingBackend : public Backend {
 public:
  explicit DelegatingBackend(std::string name, std::unique_ptr<Backend> to = make_reference_backend())
      : name_(std::move(name)), ref_(std::move(to)) {}
  std::string name() const override { return name_; }
  Status available() const override { return ref_->available(); }
  Status supports(const Case& c) const override { return ref_->supports(c); }
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    return ref_->conv_forward(g, x, w, b, relu, y);
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    return ref_->conv_backward(g, x, w, b, relu, dy, dx, dw, db);
  }
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    return ref_->maxpool_forward(g, x, y, indices);
  }
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    return ref_->maxpool_backward(g, dy, indices, dx);
  }

 protected:
  Backend& reference() { return *ref_; }

 private:
  std::string name_;
  std::unique_ptr<Backend> ref_;
};

}  // namespace kc::test
