// A backend that forwards every call to the reference (or to another backend); a test
// overrides one method to plant one bug, and the check under test must catch it.
#pragma once

#include <functional>
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
  Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) override {
    return ref_->avgpool_forward(g, x, y);
  }
  Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) override {
    return ref_->avgpool_backward(g, dy, dx);
  }

 protected:
  Backend& reference() { return *ref_; }

 private:
  std::string name_;
  std::unique_ptr<Backend> ref_;
};

// The reference with `edit` applied to what each conv forward wrote: a planted forward
// bug in one line.
class EditedConvForward : public DelegatingBackend {
 public:
  using Edit = std::function<void(const ConvGeometry&, Tensor& y)>;
  EditedConvForward(std::string name, Edit edit) : DelegatingBackend(std::move(name)), edit_(std::move(edit)) {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    edit_(g, y);
    return ok_status();
  }

 private:
  Edit edit_;
};

// The reference with `edit` applied to what each conv backward wrote.
class EditedConvBackward : public DelegatingBackend {
 public:
  using Edit = std::function<void(const ConvGeometry&, const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db)>;
  EditedConvBackward(std::string name, Edit edit) : DelegatingBackend(std::move(name)), edit_(std::move(edit)) {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    edit_(g, dy, dx, dw, db);
    return ok_status();
  }

 private:
  Edit edit_;
};

}  // namespace kc::test
