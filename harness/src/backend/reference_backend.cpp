// The oracle behind the Backend interface: kc::ref, outputs tagged f64.
#include <algorithm>

#include "kc/backend.h"
#include "kc/ref/activation.h"
#include "kc/ref/avgpool.h"
#include "kc/ref/conv.h"
#include "kc/ref/maxpool.h"

namespace kc {
namespace {

// Into the buffer the caller handed over (the calling contract: a backend writes into
// it, never replaces it); a buffer of another size is the caller's mistake, replaced.
template <class T>
void put_values(HostVector<T>& dst, HostVector<T>&& src) {
  if (dst.size() == src.size())
    std::copy(src.begin(), src.end(), dst.begin());
  else
    dst = std::move(src);
}

void put(Tensor& dst, Tensor src) {
  dst.dtype = DType::kF64;
  put_values(dst.data, std::move(src.data));
}

class ReferenceBackend final : public Backend {
 public:
  explicit ReferenceBackend(std::string name = "reference") : name_(std::move(name)) {}
  std::string name() const override { return name_; }

  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    put(y, relu ? ref::conv_bias_relu_forward(g, x, w, *b) : ref::conv_forward(g, x, w, b));
    return ok_status();
  }

  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    ref::ConvGrads r = relu ? ref::conv_bias_relu_backward(g, x, w, *b, dy) : ref::conv_backward(g, x, w, dy);
    put(dx, std::move(r.dx));
    put(dw, std::move(r.dw));
    if (db != nullptr) put(*db, std::move(r.db));
    return ok_status();
  }

  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    PoolGeometry run = g;
    run.mode = indices ? PoolMode::kTraining : PoolMode::kInference;
    ref::PoolForward r = ref::maxpool_forward(run, x);
    put(y, std::move(r.y));
    if (indices != nullptr) put_values(indices->data, std::move(r.indices->data));
    return ok_status();
  }

  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    std::optional<IndexTensor> idx;
    if (indices != nullptr) idx = *indices;
    KC_ASSIGN_OR_RETURN(Tensor r, ref::maxpool_backward(g, dy, idx));
    put(dx, std::move(r));
    return ok_status();
  }

  Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) override {
    put(y, ref::avgpool_forward(g, x));
    return ok_status();
  }

  Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) override {
    put(dx, ref::avgpool_backward(g, dy));
    return ok_status();
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }

std::unique_ptr<Backend> make_reference_as_candidate(std::string name) {
  return std::make_unique<ReferenceBackend>(std::move(name));
}

}  // namespace kc
