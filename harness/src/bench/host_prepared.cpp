#include "bench/host_prepared.h"
#include "ops/op_module.h"

namespace kc::bench {
namespace {

class HostPreparedOp final : public PreparedOp {
 public:
  HostPreparedOp(Backend& be, const Case& c, const OpGeometry& g, BenchOp op, const OpInputs& in)
      : be_(be), relu_(op_traits(c).relu), g_(g), op_(op), in_(in) {}

  Status allocate(DType dtype);
  Status run() override;
  StatusOr<PreparedOutputs> outputs() const override { return out_; }
  MemoryUse memory() const override;

 private:
  Backend& be_;
  bool relu_;
  OpGeometry g_;
  BenchOp op_;
  OpInputs in_;
  PreparedOutputs out_;
};

Status HostPreparedOp::allocate(DType dtype) {
  return std::visit([&](const auto& og) { return host_allocate(og, op_, be_, in_, dtype, out_); }, g_);
}

Status HostPreparedOp::run() {
  return std::visit([&](const auto& og) { return host_run(og, op_, relu_, be_, in_, out_); }, g_);
}

MemoryUse HostPreparedOp::memory() const {
  MemoryUse m;
  const bool backward = !bench_op_forward(op_);
  m.held_bytes = storage_size(in_.x) + storage_size(in_.w) + storage_size(in_.b) +
                 (backward ? storage_size(in_.dy) : 0) + storage_size(out_.y) + storage_size(out_.dx) +
                 storage_size(out_.dw) + storage_size(out_.db);
  if (out_.indices) m.held_bytes += out_.indices->size() * static_cast<int64_t>(sizeof(int64_t));
  return m;
}

}  // namespace

int64_t storage_size(const Tensor& t) { return t.size() * storage_bytes(t.dtype); }

StatusOr<std::unique_ptr<PreparedOp>> prepare_host_op(Backend& backend, const Case& c, const OpGeometry& g, BenchOp op,
                                                      const OpInputs& in) {
  switch (std::visit([&](const auto& og) { return host_fit(og, op); }, g)) {
    case HostFit::kNotOfCase:
      return invalid_argument(std::string(bench_op_name(op)) + " is not an op of this case");
    case HostFit::kNotAlone:
      return unimplemented(std::string(bench_op_name(op)) + " alone: the host calls compute dx, dw and db together");
    case HostFit::kRuns:
      break;
  }
  auto p = std::make_unique<HostPreparedOp>(backend, c, g, op, in);
  KC_RETURN_IF_ERROR(p->allocate(c.dtype));
  return std::unique_ptr<PreparedOp>(std::move(p));
}

}  // namespace kc::bench
