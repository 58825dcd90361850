// my.conv2d: kernelcheck's calling contract around my::conv2d_forward/backward. The case's
// tensors (doubles holding f32 values) go to float buffers and back; whatever the kernel
// does not do is refused in supports(), so those cases are SKIPPED with the reason.
#include "my_backend.h"

#include <algorithm>
#include <vector>

#include "my_conv.h"

namespace {

std::vector<float> floats(const kc::Tensor& t) { return {t.data.begin(), t.data.end()}; }
void store(const std::vector<float>& v, kc::Tensor& t) { std::copy(v.begin(), v.end(), t.data.begin()); }

my::Conv2d params(const kc::ConvGeometry& g) {
  const kc::DimGeometry& h = g.spatial.dims[0];
  const kc::DimGeometry& w = g.spatial.dims[1];
  auto i = [](int64_t v) { return static_cast<int>(v); };
  return {i(g.batch),    i(g.in_channels), i(h.in),     i(w.in),     i(g.out_channels),
          i(h.kernel),   i(w.kernel),      i(h.stride), i(w.stride), i(h.dilation),
          i(w.dilation), i(h.pad_lo),      i(w.pad_lo), i(h.out),    i(w.out)};
}

class MyConv2d final : public kc::Backend {
 public:
  std::string name() const override { return "my.conv2d"; }

  kc::Status supports(const kc::Case& c) const override {
    const auto* conv = std::get_if<kc::ConvParams>(&c.op);
    if (conv == nullptr) return kc::unimplemented("my.conv2d runs plain conv only");
    if (c.dtype != kc::DType::kF32) return kc::unimplemented("my.conv2d is f32 only");
    if (c.input.spatial.size() != 2) return kc::unimplemented("my.conv2d is 2-D only");
    if (conv->groups != 1 || conv->padding_mode != kc::PaddingMode::kZeros) {
      return kc::unimplemented("my.conv2d has one group and zero padding only");
    }
    return kc::ok_status();
  }

  kc::Status conv_forward(const kc::ConvGeometry& g, const kc::Tensor& x, const kc::Tensor& w, const kc::Tensor* b,
                          bool relu, kc::Tensor& y) override {
    if (relu) return kc::unimplemented("my.conv2d has no fused relu");
    const std::vector<float> fx = floats(x), fw = floats(w), fb = b ? floats(*b) : std::vector<float>{};
    std::vector<float> fy(y.data.size());
    my::conv2d_forward(params(g), fx.data(), fw.data(), b ? fb.data() : nullptr, fy.data());
    store(fy, y);
    return kc::ok_status();
  }

  kc::Status conv_backward(const kc::ConvGeometry& g, const kc::Tensor& x, const kc::Tensor& w, const kc::Tensor* b,
                           bool relu, const kc::Tensor& dy, kc::Tensor& dx, kc::Tensor& dw, kc::Tensor* db) override {
    (void)b;
    if (relu) return kc::unimplemented("my.conv2d has no fused relu");
    const std::vector<float> fx = floats(x), fw = floats(w), fdy = floats(dy);
    std::vector<float> fdx(dx.data.size()), fdw(dw.data.size()), fdb(db ? db->data.size() : 0);
    my::conv2d_backward(params(g), fx.data(), fw.data(), fdy.data(), fdx.data(), fdw.data(), db ? fdb.data() : nullptr);
    store(fdx, dx);
    store(fdw, dw);
    if (db) store(fdb, *db);
    return kc::ok_status();
  }

  kc::Status maxpool_forward(const kc::PoolGeometry&, const kc::Tensor&, kc::Tensor&, kc::IndexTensor*) override {
    return kc::unimplemented("my.conv2d has no max pool");
  }
  kc::Status maxpool_backward(const kc::PoolGeometry&, const kc::Tensor&, const kc::IndexTensor*,
                              kc::Tensor&) override {
    return kc::unimplemented("my.conv2d has no max pool");
  }
};

}  // namespace

std::unique_ptr<kc::Backend> make_my_backend() { return std::make_unique<MyConv2d>(); }
