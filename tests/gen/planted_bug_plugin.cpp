// A plugin with planted bugs for the fuzzing tests. "gen.dw_last_position" (the trap
// zoo's trap.dw_last_position in miniature) is the reference except that dw keeps only
// the last output position's contribution, the last write of a kernel whose threads
// overwrite instead of adding: invisible on a case with a single output position, so
// the fuzzer must find a case with two or more and shrink it to about that.
// "gen.crash_on_stride" aborts the process on any strided conv: the fuzzer must pin the
// crash on that case (not on the others its worker ran) and shrink it.
#include <cstdlib>

#include "kc/plugin.h"
#include "support/delegating_backend.h"

namespace {

class Planted : public kc::test::DelegatingBackend {
 public:
  explicit Planted(std::string name) : DelegatingBackend(std::move(name)) {}
  kc::Status conv_forward(const kc::ConvGeometry& g, const kc::Tensor& x, const kc::Tensor& w, const kc::Tensor* b,
                          bool relu, kc::Tensor& y) override {
    for (const kc::DimGeometry& d : g.spatial.dims) {
      if (name() == "gen.crash_on_stride" && d.stride > 1) std::abort();
    }
    return reference().conv_forward(g, x, w, b, relu, y);
  }
  kc::Status conv_backward(const kc::ConvGeometry& g, const kc::Tensor& x, const kc::Tensor& w, const kc::Tensor* b,
                           bool relu, const kc::Tensor& dy, kc::Tensor& dx, kc::Tensor& dw, kc::Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    if (name() != "gen.dw_last_position") return kc::ok_status();
    // dw again from dy with every output position but the last zeroed.
    const int64_t positions = g.spatial.out_count();
    kc::Tensor last = dy;
    for (int64_t i = 0; i < last.size(); ++i) {
      if (i % positions != positions - 1) last[i] = 0.0;
    }
    kc::Tensor dx_unused = dx, db_unused = db ? *db : kc::Tensor{};
    return reference().conv_backward(g, x, w, b, relu, last, dx_unused, dw, db ? &db_unused : nullptr);
  }
};

void register_backends(kc::Registry& r) {
  for (const char* name : {"gen.dw_last_position", "gen.crash_on_stride"}) {
    (void)r.add(name, [name] { return std::make_unique<Planted>(name); });
  }
}

}  // namespace

KC_PLUGIN(register_backends)
