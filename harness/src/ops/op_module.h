// What each op's module (ops/<op>/, docs/architecture.md) defines for its params or
// geometry type: the one list of the ops' functions, a new op's to fill in. In kc_core
// (ops/<op>/<op>_core.cpp) its geometry (kc/shape.h declares the builders), traits, input
// shapes, cost, work, memory parts, validation and the checks that never apply to it; in
// each layer above, in the module's `<op>_<layer>.cpp`, what only that layer asks of it:
// its YAML (io), backend calls (backend), oracle forward and absolute pass (judge), its
// checks' parts (checks), generator (gen), timed calls (bench) and explain (cli). Callers
// dispatch with std::visit and a generic lambda over these overloads, so that an op
// without one fails to compile there, and name no op. Declarations only, of core's
// level: the layers' own types are forward-declared. The op's name and YAML section are
// its params' kName and kSection (kc/case.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/memory_parts.h"
#include "core/validate.h"
#include "kc/case.h"
#include "kc/dtype.h"
#include "kc/prepared_op.h"
#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc {

// The resolved geometry of a single-op case: conv and conv_bias_relu, max pool, average
// pool. Dispatched with std::visit and a generic lambda over the overloads below.
using OpGeometry = std::variant<ConvGeometry, PoolGeometry, AvgPoolGeometry>;
// The case's geometry, validated (a stack has one per layer: refused).
StatusOr<OpGeometry> geometry_of(const Case& c, const ConvParams& p);
StatusOr<OpGeometry> geometry_of(const Case& c, const ConvBiasReluParams& p);
StatusOr<OpGeometry> geometry_of(const Case& c, const MaxPoolParams& p);
StatusOr<OpGeometry> geometry_of(const Case& c, const AvgPoolParams& p);
StatusOr<OpGeometry> geometry_of(const Case& c, const StackParams& p);

// The window of every op, per spatial dim (shape.cpp): stride and dilation as given (or
// ones), padding resolved, output extents by the shape contract.
Dims or_ones(const Dims& d, size_t rank);
SpatialGeometry build_spatial(const Dims& in, const Dims& kernel, const Dims& stride, const Dims& dilation,
                              const PadSpec& pad, bool ceil_mode);

// What one call of an op costs by its definition, for kcheck bench's rates and roofline
// (docs/bench.md, "Counters"): FLOPs (two per multiply-add of the direct conv; one per
// comparison or add of a pool and a bias gradient) and compulsory bytes (each input
// read once, each output written once, in the storage dtype; argmax indices as the
// smallest integer holding a window offset: 1 byte up to 256 taps, else 4). Zero for a
// call the op does not have.
struct OpCost {
  double flops = 0.0;
  double bytes = 0.0;
};
// A tensor's element count as a double, for the costs.
inline double elements(const Dims& shape) { return static_cast<double>(element_count(shape)); }
OpCost op_cost(const ConvGeometry& g, DType dtype, BenchOp op);
OpCost op_cost(const PoolGeometry& g, DType dtype, BenchOp op);
OpCost op_cost(const AvgPoolGeometry& g, DType dtype, BenchOp op);

// The op's parts of the host memory estimate (core/memory_parts.h; `f` its field path
// in messages, `input` the cause that is the input's size). A stack has none of its own:
// its layers are single-op cases.
std::vector<MemoryPart> memory_parts(const Case& c, const ConvParams& p, const std::string& f, const Cause& input);
std::vector<MemoryPart> memory_parts(const Case& c, const ConvBiasReluParams& p, const std::string& f,
                                     const Cause& input);
std::vector<MemoryPart> memory_parts(const Case& c, const MaxPoolParams& p, const std::string& f, const Cause& input);
std::vector<MemoryPart> memory_parts(const Case& c, const AvgPoolParams& p, const std::string& f, const Cause& input);
std::vector<MemoryPart> memory_parts(const Case& c, const StackParams& p, const std::string& f, const Cause& input);

// The work of one forward, in double (three extents of 2^31 would overflow int64), and
// its unit in messages (" multiply-adds"). A stack's is its layers' (check_stack_work).
struct OpWork {
  double count = 0.0;
  const char* unit = "";
};
OpWork op_work(const Case& c, const ConvParams& p);
OpWork op_work(const Case& c, const ConvBiasReluParams& p);
OpWork op_work(const Case& c, const MaxPoolParams& p);
OpWork op_work(const Case& c, const AvgPoolParams& p);
OpWork op_work(const Case& c, const StackParams& p);

// The op's padding field (padding_of in kc/case.h): a stack's is its layer conv's.
const PadSpec& op_padding(const ConvParams& p);
const PadSpec& op_padding(const ConvBiasReluParams& p);
const PadSpec& op_padding(const MaxPoolParams& p);
const PadSpec& op_padding(const AvgPoolParams& p);
const PadSpec& op_padding(const StackParams& p);

// The op with `valid` padding (zeros padding mode for a conv, no ceil_mode for a pool):
// what the padding check runs on its explicitly padded input. A stack: unchanged.
void drop_padding(ConvParams& p);
void drop_padding(ConvBiasReluParams& p);
void drop_padding(MaxPoolParams& p);
void drop_padding(AvgPoolParams& p);
void drop_padding(StackParams& p);

// What code outside the modules asks of an op, answered by each module so that no site
// names an op to learn it: a new op states each answer, or op_traits(Case) fails to
// compile. A stack's layers answer for themselves (ops/stack/stack_layers.h).
struct OpTraits {
  bool relu = false;     // y = relu(z): relu' routes dy, and y is never negative (conv_bias_relu)
  bool indices = false;  // y selects elements of x and training keeps their argmax (max pool)
};
OpTraits op_traits(const ConvParams&);
OpTraits op_traits(const ConvBiasReluParams&);
OpTraits op_traits(const MaxPoolParams&);
OpTraits op_traits(const AvgPoolParams&);
OpTraits op_traits(const StackParams&);
inline OpTraits op_traits(const Case& c) {
  return std::visit([](const auto& p) { return op_traits(p); }, c.op);
}

// The shapes of a single-op case's input tensors, from its geometry (validated or
// not): x, w and b where the op has them (b with a bias), and dy (y's). A stack's inputs
// are made per layer (ops/stack/stack_layers.h): it has none here.
struct InputShapes {
  Dims x, dy;
  std::optional<Dims> w, b;
};
InputShapes input_shapes(const Case& c, const ConvParams& p);
InputShapes input_shapes(const Case& c, const ConvBiasReluParams& p);
InputShapes input_shapes(const Case& c, const MaxPoolParams& p);
InputShapes input_shapes(const Case& c, const AvgPoolParams& p);
InputShapes input_shapes(const Case& c, const StackParams& p);
inline InputShapes input_shapes(const Case& c) {
  return std::visit([&](const auto& p) { return input_shapes(c, p); }, c.op);
}

// Why argmax never applies to an op other than max pooling.
inline constexpr std::string_view kArgmaxOnlyMaxPool = "argmax applies to max pooling only";

// The op's rules of validate() (validate.h), after the input's own fields passed.
Status validate_op(const Case& c, const ConvParams& p, const Limits& limits);
Status validate_op(const Case& c, const ConvBiasReluParams& p, const Limits& limits);
Status validate_op(const Case& c, const MaxPoolParams& p, const Limits& limits);
Status validate_op(const Case& c, const AvgPoolParams& p, const Limits& limits);
Status validate_op(const Case& c, const StackParams& p, const Limits& limits);

// Why check `check` (a name in core/check_table.h) never applies to case c of this op,
// from the case alone; empty: it may. The table's own rules (a stack's checks versus a
// single op's, golden without expected tensors) are applied before these.
std::string never_applies(const Case& c, const ConvParams& p, std::string_view check);
std::string never_applies(const Case& c, const ConvBiasReluParams& p, std::string_view check);
std::string never_applies(const Case& c, const MaxPoolParams& p, std::string_view check);
std::string never_applies(const Case& c, const AvgPoolParams& p, std::string_view check);
std::string never_applies(const Case& c, const StackParams& p, std::string_view check);

// ---- kc_io (ops/<op>/<op>_io.cpp) ----
namespace io {
class Value;
// The op's params read from its YAML section `v` (the tag picks the op; its fields are
// not read), for a case of `rank` spatial dims; field rules only, shapes are validate()'s.
StatusOr<OpParams> read_params(const Value& v, size_t rank, const ConvParams&);
StatusOr<OpParams> read_params(const Value& v, size_t rank, const ConvBiasReluParams&);
StatusOr<OpParams> read_params(const Value& v, size_t rank, const MaxPoolParams&);
StatusOr<OpParams> read_params(const Value& v, size_t rank, const AvgPoolParams&);
StatusOr<OpParams> read_params(const Value& v, size_t rank, const StackParams&);
// The op's section as one YAML flow map that reads back to equal params.
std::string params_flow(const ConvParams& p);
std::string params_flow(const ConvBiasReluParams& p);
std::string params_flow(const MaxPoolParams& p);
std::string params_flow(const AvgPoolParams& p);
std::string params_flow(const StackParams& p);
}  // namespace io

// ---- kc_gen (ops/<op>/<op>_gen.cpp) ----
}  // namespace kc
namespace rc {
template <typename T>
class Gen;
}  // namespace rc
namespace kc {
namespace gen {
struct Options;
// Valid cases of the op (validate() accepts every one), of the options' sizes and data:
// each module's file says what it draws, in shrink order.
rc::Gen<Case> op_case(const Options& options, const ConvParams&);
rc::Gen<Case> op_case(const Options& options, const ConvBiasReluParams&);
rc::Gen<Case> op_case(const Options& options, const MaxPoolParams&);
rc::Gen<Case> op_case(const Options& options, const AvgPoolParams&);
rc::Gen<Case> op_case(const Options& options, const StackParams&);
namespace detail {
struct WindowRef;
// The op's window fields, and its conv (a stack's: its layer conv; null for a pool), as
// the generators edit them (gen/op_fields.h).
WindowRef window_ref(ConvParams& p);
WindowRef window_ref(ConvBiasReluParams& p);
WindowRef window_ref(MaxPoolParams& p);
WindowRef window_ref(AvgPoolParams& p);
WindowRef window_ref(StackParams& p);
ConvParams* conv_params(ConvParams& p);
ConvParams* conv_params(ConvBiasReluParams& p);
ConvParams* conv_params(MaxPoolParams& p);
ConvParams* conv_params(AvgPoolParams& p);
ConvParams* conv_params(StackParams& p);
struct Rule;
// The rules an invalid case of the op can break besides those of every op (gen/invalid.h),
// in the order a seed keeps generating.
std::vector<Rule> op_rules(const Case& c, const ConvParams& p);
std::vector<Rule> op_rules(const Case& c, const ConvBiasReluParams& p);
std::vector<Rule> op_rules(const Case& c, const MaxPoolParams& p);
std::vector<Rule> op_rules(const Case& c, const AvgPoolParams& p);
std::vector<Rule> op_rules(const Case& c, const StackParams& p);
// A boolean field of the op's section (a stack's: of its layer), which the reader rules
// write as a YAML 1.1 word.
std::string_view bool_field(const ConvParams& p);
std::string_view bool_field(const ConvBiasReluParams& p);
std::string_view bool_field(const MaxPoolParams& p);
std::string_view bool_field(const AvgPoolParams& p);
std::string_view bool_field(const StackParams& p);
struct Quantity;
// The quantities the boundary sweep sets on the op's minimal case (gen/sweep_quantities.h),
// and that case's own fields made minimal (its checks too: argmax on a max pool).
std::vector<Quantity> sweep_quantities(const ConvParams& p);
std::vector<Quantity> sweep_quantities(const ConvBiasReluParams& p);
std::vector<Quantity> sweep_quantities(const MaxPoolParams& p);
std::vector<Quantity> sweep_quantities(const AvgPoolParams& p);
std::vector<Quantity> sweep_quantities(const StackParams& p);
void make_minimal(Case& c, ConvParams& p);
void make_minimal(Case& c, ConvBiasReluParams& p);
void make_minimal(Case& c, MaxPoolParams& p);
void make_minimal(Case& c, AvgPoolParams& p);
void make_minimal(Case& c, StackParams& p);
}  // namespace detail
}  // namespace gen

// ---- kc_harness's backend calls (ops/<op>/<op>_backend.cpp, backend/op_call.h) ----
class Backend;
struct OpInputs;
struct OpOutputs;
// The op's forward (into o.y, and o.indices where it keeps them) and backward (into o.dx,
// o.dw, o.db with o's own indices) on the backend, under the calling contract (invoke.h).
void forward_into(Backend& be, const Case& c, const ConvGeometry& g, const OpInputs& in, OpOutputs& o);
void forward_into(Backend& be, const Case& c, const PoolGeometry& g, const OpInputs& in, OpOutputs& o);
void forward_into(Backend& be, const Case& c, const AvgPoolGeometry& g, const OpInputs& in, OpOutputs& o);
void backward_into(Backend& be, const Case& c, const ConvGeometry& g, const OpInputs& in, OpOutputs& o);
void backward_into(Backend& be, const Case& c, const PoolGeometry& g, const OpInputs& in, OpOutputs& o);
void backward_into(Backend& be, const Case& c, const AvgPoolGeometry& g, const OpInputs& in, OpOutputs& o);

// ---- kc_harness's judge (ops/<op>/<op>_judge.cpp) ----
// The oracle's forward at given inputs (w and b ignored by an op without them, b by a
// conv without a bias): y, and a max pool's argmax.
struct OracleForward {
  Tensor y;
  std::optional<IndexTensor> indices;
};
OracleForward oracle_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b);
OracleForward oracle_forward(const PoolGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b);
OracleForward oracle_forward(const AvgPoolGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b);
// The oracle on absolute values (judge/absolute_pass.h): per element the sum of |terms|.
OpOutputs absolute_pass_of(const Case& c, const ConvGeometry& g, const OpInputs& in, const OpOutputs& ref);
OpOutputs absolute_pass_of(const Case& c, const PoolGeometry& g, const OpInputs& in, const OpOutputs& ref);
OpOutputs absolute_pass_of(const Case& c, const AvgPoolGeometry& g, const OpInputs& in, const OpOutputs& ref);

// ---- kc_harness's checks (ops/<op>/<op>_checks.cpp), by the op's geometry ----
struct CheckContext;
struct CheckResult;
struct ToleranceSpec;
namespace checks {
// distrust() of the reference's dx with what the geometry alone makes zero left out.
std::string distrust_dx(const ConvGeometry& g, const Tensor& ref, std::string_view source);
std::string distrust_dx(const PoolGeometry& g, const Tensor& ref, std::string_view source);
std::string distrust_dx(const AvgPoolGeometry& g, const Tensor& ref, std::string_view source);
// The shape check's expectations of the candidate's outputs (its gradients when
// `backward` ran).
void expect_shapes(const ConvGeometry& g, const CheckContext& ctx, bool backward, CheckResult& r);
void expect_shapes(const PoolGeometry& g, const CheckContext& ctx, bool backward, CheckResult& r);
void expect_shapes(const AvgPoolGeometry& g, const CheckContext& ctx, bool backward, CheckResult& r);
// The terms output `tensor` sums (ToleranceSpec::n, judge/tolerance.h) and their scale.
void tolerance_terms(const ConvGeometry& g, std::string_view tensor, ToleranceSpec& s);
void tolerance_terms(const PoolGeometry& g, std::string_view tensor, ToleranceSpec& s);
void tolerance_terms(const AvgPoolGeometry& g, std::string_view tensor, ToleranceSpec& s);
// The backward check's comparisons of a single op's gradients (not a fused conv's,
// checks/backward.cpp): each through `compare` (gradient, candidate's, expected, its
// absolute pass), or on its own terms into `r`, with the first reason to mistrust a pass
// left in `why`.
using GradientCompare =
    std::function<void(const char* name, const Tensor& cand, const Tensor& want, const Tensor& abs)>;
void compare_gradients(const ConvGeometry& g, const CheckContext& ctx, const GradientCompare& compare, CheckResult& r,
                       std::string& why);
void compare_gradients(const PoolGeometry& g, const CheckContext& ctx, const GradientCompare& compare, CheckResult& r,
                       std::string& why);
void compare_gradients(const AvgPoolGeometry& g, const CheckContext& ctx, const GradientCompare& compare,
                       CheckResult& r, std::string& why);
// The state check's changes of the op's own fields (checks/shape_mutations.h), after
// batch and extents; a stack clears the list (its layers are its own cases).
void add_shape_mutations(std::vector<std::function<std::string(Case&, int64_t)>>& m, const ConvParams& p);
void add_shape_mutations(std::vector<std::function<std::string(Case&, int64_t)>>& m, const ConvBiasReluParams& p);
void add_shape_mutations(std::vector<std::function<std::string(Case&, int64_t)>>& m, const MaxPoolParams& p);
void add_shape_mutations(std::vector<std::function<std::string(Case&, int64_t)>>& m, const AvgPoolParams& p);
void add_shape_mutations(std::vector<std::function<std::string(Case&, int64_t)>>& m, const StackParams& p);
// The padding check (checks/padding.cpp, padding_run.h): whether the op on its explicitly
// padded input is the same op, what of its run is compared beyond y, and the coverage
// part on inputs whose answer the geometry alone gives.
struct Padded;
namespace rules {
class Findings;
}
bool padded_run_judges(const ConvGeometry& g);
bool padded_run_judges(const PoolGeometry& g);
bool padded_run_judges(const AvgPoolGeometry& g);
void compare_padded_run(const ConvGeometry& g, const CheckContext& ctx, const Padded& pd, const OpOutputs& run,
                        rules::Findings& f, CheckResult& r);
void compare_padded_run(const PoolGeometry& g, const CheckContext& ctx, const Padded& pd, const OpOutputs& run,
                        rules::Findings& f, CheckResult& r);
void compare_padded_run(const AvgPoolGeometry& g, const CheckContext& ctx, const Padded& pd, const OpOutputs& run,
                        rules::Findings& f, CheckResult& r);
void check_coverage(const ConvGeometry& g, const CheckContext& ctx, rules::Findings& f, std::string& notes);
void check_coverage(const PoolGeometry& g, const CheckContext& ctx, rules::Findings& f, std::string& notes);
void check_coverage(const AvgPoolGeometry& g, const CheckContext& ctx, rules::Findings& f, std::string& notes);
}  // namespace checks

// ---- kcheck bench (ops/<op>/<op>_bench.cpp) ----
namespace bench {
struct OpPlan;
enum class HostFit : int;
// The backend calls timed for a case (bench/case_bench.h); none for a stack, which is
// timed step by step (bench/stack_step.h).
std::vector<OpPlan> bench_plans(const ConvParams& p);
std::vector<OpPlan> bench_plans(const ConvBiasReluParams& p);
std::vector<OpPlan> bench_plans(const MaxPoolParams& p);
std::vector<OpPlan> bench_plans(const AvgPoolParams& p);
std::vector<OpPlan> bench_plans(const StackParams& p);
// The first word of a bench entry's geometry ("conv ", "pool ", "avgpool ").
std::string_view bench_kind(const ConvGeometry& g);
std::string_view bench_kind(const PoolGeometry& g);
std::string_view bench_kind(const AvgPoolGeometry& g);
// The op's host calls as a prepared op (bench/host_prepared.h): whether they run `op`,
// its outputs allocated (and what a backward needs made first), and one timed call.
HostFit host_fit(const ConvGeometry& g, BenchOp op);
HostFit host_fit(const PoolGeometry& g, BenchOp op);
HostFit host_fit(const AvgPoolGeometry& g, BenchOp op);
Status host_allocate(const ConvGeometry& g, BenchOp op, Backend& be, const OpInputs& in, DType dtype,
                     PreparedOutputs& out);
Status host_allocate(const PoolGeometry& g, BenchOp op, Backend& be, const OpInputs& in, DType dtype,
                     PreparedOutputs& out);
Status host_allocate(const AvgPoolGeometry& g, BenchOp op, Backend& be, const OpInputs& in, DType dtype,
                     PreparedOutputs& out);
Status host_run(const ConvGeometry& g, BenchOp op, bool relu, Backend& be, const OpInputs& in, PreparedOutputs& out);
Status host_run(const PoolGeometry& g, BenchOp op, bool relu, Backend& be, const OpInputs& in, PreparedOutputs& out);
Status host_run(const AvgPoolGeometry& g, BenchOp op, bool relu, Backend& be, const OpInputs& in, PreparedOutputs& out);
}  // namespace bench

// ---- kcheck explain (ops/<op>/<op>_cli.cpp) ----
namespace cli {
// What a valid case asks for, resolved, on stdout (indented under its file line).
void explain(const Case& c, const ConvParams& p);
void explain(const Case& c, const ConvBiasReluParams& p);
void explain(const Case& c, const MaxPoolParams& p);
void explain(const Case& c, const AvgPoolParams& p);
void explain(const Case& c, const StackParams& p);
// What can be shown of a case whose geometry was refused (a stack: its layers up to the
// refused one); nothing for most ops.
void explain_refused(const Case& unvalidated, const ConvParams& p);
void explain_refused(const Case& unvalidated, const ConvBiasReluParams& p);
void explain_refused(const Case& unvalidated, const MaxPoolParams& p);
void explain_refused(const Case& unvalidated, const AvgPoolParams& p);
void explain_refused(const Case& unvalidated, const StackParams& p);
}  // namespace cli

}  // namespace kc
