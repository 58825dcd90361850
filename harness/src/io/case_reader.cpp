// Internal to kc_io: reading the fields of one case (docs/cases.md) from a layered
// Value into a Case. Field rules only; geometry and sizes are validate()'s job, except
// what must be known here: inline data must match its own shape's element count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/check_table.h"
#include "core/format.h"
#include "core/validate.h"
#include "io/case_yaml.h"
#include "io/params_yaml.h"
#include "ops/op_module.h"

namespace kc::io {
namespace {

// The sections of every op's params, once each.
std::vector<std::string_view> op_sections() {
  std::vector<std::string_view> sections;
  for (const OpParams& op : all_ops()) {
    if (std::find(sections.begin(), sections.end(), op_section(op)) == sections.end()) {
      sections.push_back(op_section(op));
    }
  }
  return sections;
}

// The op's params section; another op's section is refused when the case itself writes
// it, and ignored when it is only inherited from defaults.
Status read_op(const Value& v, const OpParams& op, std::string_view op_text, Case* c) {
  const std::string_view section = op_section(op);
  for (std::string_view other : op_sections()) {
    if (other == section || !v.own(other)) continue;
    return v.get(other)->error("given, but op is " + std::string(op_text) + " (whose " +
                               (std::holds_alternative<StackParams>(op)
                                    ? "layer goes under stack: layer:)"
                                    : "params go under " + std::string(section) + ":)"));
  }
  KC_ASSIGN_OR_RETURN(Value p, require(v, section));
  const size_t rank = c->input.spatial.size();
  KC_ASSIGN_OR_RETURN(c->op, std::visit([&](const auto& tag) { return read_params(p, rank, tag); }, op));
  return ok_status();
}

// The op named by `op:`, as its default params.
StatusOr<OpParams> read_op_name(const Value& v) {
  if (v.is_scalar()) {
    if (std::optional<OpParams> op = op_named(v.text())) return *op;
  }
  return v.type_error("one of " + op_name_list(", "));
}

Status read_input(const Value& v, InputSpec* in) {
  KC_RETURN_IF_ERROR(v.check_keys({"batch", "channels", "spatial"}));
  KC_RETURN_IF_ERROR(read_optional(v, "batch", in->batch, [&](const Value& f) { return read_int(f); }));
  KC_RETURN_IF_ERROR(read_optional(v, "channels", in->channels, [&](const Value& f) { return read_int(f); }));
  KC_ASSIGN_OR_RETURN(Value spatial, require(v, "spatial"));
  if (!spatial.is_sequence()) return spatial.type_error("a list of extents ([W], [H, W] or [D, H, W])");
  KC_ASSIGN_OR_RETURN(in->spatial, read_dims(spatial, 0));
  return ok_status();
}

Status read_data(const Value& v, DataSpec* data) {
  KC_RETURN_IF_ERROR(v.check_keys({"seed", "fill", "zero"}));
  if (auto f = v.get("seed")) {
    KC_ASSIGN_OR_RETURN(data->seed, read_uint64(*f));
  }
  if (auto f = v.get("fill")) {
    KC_ASSIGN_OR_RETURN(data->fill, read_enum<Fill>(*f, {{"random", Fill::kRandom},
                                                         {"normal", Fill::kNormal},
                                                         {"integer", Fill::kInteger},
                                                         {"ties", Fill::kTies},
                                                         {"special", Fill::kSpecial},
                                                         {"boundary", Fill::kBoundary}}));
  }
  if (auto f = v.get("zero")) {
    KC_ASSIGN_OR_RETURN(data->zero, read_zero_regions(*f));
  }
  return ok_status();
}

// A name from the check table (core/check_table.h).
StatusOr<std::string_view> read_check_name(const Value& v) {
  std::string list;
  for (const CheckInfo& info : check_table()) {
    if (v.is_scalar() && v.text() == info.name) return info.name;
    list += (list.empty() ? "" : ", ") + std::string(info.name);
  }
  return v.type_error("one of " + list);
}

StatusOr<std::vector<std::string>> read_checks(const Value& v) {
  if (!v.is_sequence()) return v.type_error("a list of check names");
  // Empty would read as "every check" (a case without `checks:`), the opposite of what it says.
  if (v.node().size() == 0)
    return v.error("an empty list checks nothing: name the checks, or leave `checks` out for every one that applies");
  std::vector<std::string> checks;
  for (const Value& item : v.items()) {
    KC_ASSIGN_OR_RETURN(std::string_view name, read_check_name(item));
    if (std::find(checks.begin(), checks.end(), name) != checks.end()) {
      return item.error("check " + std::string(name) + " is listed twice");
    }
    checks.emplace_back(name);
  }
  return checks;
}

StatusOr<double> read_tolerance_value(const Value& v) {
  KC_ASSIGN_OR_RETURN(double t, read_double(v));
  if (!(t >= 0.0) || t == std::numeric_limits<double>::infinity()) {
    return v.error("must be a finite number >= 0, got " + v.text());
  }
  return t;
}

StatusOr<Tolerance> read_tolerance(const Value& v) {
  Tolerance tol;
  if (v.is_scalar()) {
    KC_ASSIGN_OR_RETURN(
        tol.kind, read_enum<ToleranceKind>(v, {{"bound", ToleranceKind::kBound}, {"exact", ToleranceKind::kExact}}));
    return tol;
  }
  if (!v.is_map()) return v.type_error("bound, exact or {rtol, atol}");
  KC_RETURN_IF_ERROR(v.check_keys({"rtol", "atol"}));
  tol.kind = ToleranceKind::kExplicit;
  KC_RETURN_IF_ERROR(read_optional(v, "rtol", tol.rtol, [&](const Value& f) { return read_tolerance_value(f); }));
  KC_RETURN_IF_ERROR(read_optional(v, "atol", tol.atol, [&](const Value& f) { return read_tolerance_value(f); }));
  return tol;
}

StatusOr<Expectation> read_expect(const Value& v) {
  Expectation e;
  if (v.is_scalar() && v.text() == "pass") return e;
  if (!v.is_map()) return v.type_error("pass or {error: \"text the error must contain\"}");
  KC_RETURN_IF_ERROR(v.check_keys({"error"}));
  KC_ASSIGN_OR_RETURN(Value err, require(v, "error"));
  KC_ASSIGN_OR_RETURN(e.error, read_string(err));
  if (e.error.find_first_not_of(" \t\r\n") == std::string::npos) {
    return err.error(e.error.empty() ? "must not be empty (it would match any error)"
                                     : "must not be only whitespace (it would match almost any error)");
  }
  e.pass = false;
  return e;
}

// How a tensor's values are read: rounded to the case dtype (inputs), kept as written
// (golden outputs), or integers (indices).
enum class DataRule { kRound, kKeep, kIndex };

Status read_values(const Value& data, DataRule rule, DType dtype, HostVector<double>* out) {
  constexpr int64_t kMaxIndex = int64_t{1} << 53;  // exact in a double
  size_t i = 0;
  for (auto it = data.node().begin(); it != data.node().end(); ++it, ++i) {
    const YAML::Node& n = *it;
    bool bad = !n.IsScalar() || n.Tag() != "?";  // quoted or tagged: not a plain number
    bool out_of_range = false;
    double v = 0.0;
    if (!bad && rule == DataRule::kIndex) {
      const std::optional<int64_t> k = parse_int_text(n.Scalar(), &out_of_range);
      bad = !k || *k < 0 || *k > kMaxIndex;  // compared as integers: 2^53 + 1 is no double
      v = k ? static_cast<double>(*k) : 0.0;
    } else if (!bad) {
      const std::optional<double> d = parse_double_text(n.Scalar(), &out_of_range);
      bad = !d;
      v = d ? (rule == DataRule::kRound ? round_to(dtype, *d) : *d) : 0.0;
    }
    if (bad) {
      const Value item = data.item(i, n);
      const std::string what = rule == DataRule::kIndex ? "an index (an integer in [0, 2^53])" : "a number";
      const Status s = out_of_range && rule != DataRule::kIndex
                           ? item.error(n.Scalar() + " is outside the range of a double")
                           : item.plain_type_error(what);
      return s;
    }
    if (rule == DataRule::kRound && std::isinf(v) && !std::isinf(*parse_double_text(n.Scalar(), &out_of_range))) {
      return data.item(i, n).error(n.Scalar() + " overflows " + std::string(dtype_name(dtype)) +
                                   " (write inf for an infinity)");
    }
    out->push_back(v);
  }
  return ok_status();
}

StatusOr<Tensor> read_tensor(const Value& v, DataRule rule, DType dtype) {
  KC_RETURN_IF_ERROR(v.check_keys({"shape", "data"}));
  Tensor t;
  t.dtype = rule == DataRule::kRound ? dtype : DType::kF64;
  KC_ASSIGN_OR_RETURN(Value shape, require(v, "shape"));
  if (!shape.is_sequence()) return shape.type_error("a list of extents");
  KC_ASSIGN_OR_RETURN(t.shape, read_dims(shape, 0));
  int64_t count = 1;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] < 0) return shape.error("extent " + std::to_string(t.shape[i]) + " is negative");
    count = saturating_mul(count, t.shape[i]);
  }
  KC_ASSIGN_OR_RETURN(Value data, require(v, "data"));
  if (!data.is_sequence()) return data.type_error("a list of numbers");
  // A nested list (a 2-D tensor written by rows) is the mistake to name, not the count
  // of top-level items it throws off.
  size_t at = 0;
  for (auto it = data.node().begin(); it != data.node().end(); ++it, ++at) {
    if (it->IsSequence()) {
      return data.item(at, *it).error(
          "expected a number, got a list (data is one flat list of the tensor's "
          "values, row-major)");
    }
  }
  const size_t given = data.node().size();
  if (static_cast<uint64_t>(count) != given) {
    return data.error("has " + std::to_string(given) + " values but shape " + dims_to_string(t.shape) + " needs " +
                      std::to_string(count));
  }
  t.data.reserve(given);
  KC_RETURN_IF_ERROR(read_values(data, rule, dtype, &t.data));
  return t;
}

Status read_tensor_map(const Value& v, bool expected, DType dtype, std::map<std::string, Tensor>* out) {
  const std::initializer_list<std::string_view> inputs = {"x", "w", "b", "dy"};
  const std::initializer_list<std::string_view> outputs = {"y", "indices", "dx", "dw", "db"};
  KC_RETURN_IF_ERROR(v.check_keys(expected ? outputs : inputs));
  for (std::string_view name : expected ? outputs : inputs) {
    std::optional<Value> f = v.get(name);
    if (!f) continue;
    const DataRule rule = !expected ? DataRule::kRound : name == "indices" ? DataRule::kIndex : DataRule::kKeep;
    KC_ASSIGN_OR_RETURN(Tensor t, read_tensor(*f, rule, dtype));
    out->emplace(std::string(name), std::move(t));
  }
  return ok_status();
}

Status read_options(const Value& v, Case* c) {
  if (auto f = v.get("data")) KC_RETURN_IF_ERROR(read_data(*f, &c->data));
  KC_RETURN_IF_ERROR(read_optional(v, "checks", c->checks, [&](const Value& f) { return read_checks(f); }));
  KC_RETURN_IF_ERROR(read_optional(v, "tolerance", c->tolerance, [&](const Value& f) { return read_tolerance(f); }));
  KC_RETURN_IF_ERROR(read_optional(v, "deterministic", c->deterministic, [&](const Value& f) { return read_bool(f); }));
  if (auto f = v.get("tensors")) KC_RETURN_IF_ERROR(read_tensor_map(*f, false, c->dtype, &c->tensors));
  if (auto f = v.get("expected")) KC_RETURN_IF_ERROR(read_tensor_map(*f, true, c->dtype, &c->expected));
  return ok_status();
}

}  // namespace

StatusOr<Case> read_case(const Value& v, Expectation* expect) {
  // `expect` first: a case written to be refused (say, for an unknown key) must still
  // tell the runner which error it expects.
  KC_RETURN_IF_ERROR(read_optional(v, "expect", *expect, [&](const Value& f) { return read_expect(f); }));
  std::vector<std::string_view> keys = {"name", "op", "dtype", "input"};
  for (std::string_view section : op_sections()) keys.push_back(section);
  keys.insert(keys.end(),
              {"data", "checks", "tolerance", "accumulation", "deterministic", "tensors", "expected", "expect"});
  KC_RETURN_IF_ERROR(v.check_keys(keys));
  Case c;
  c.expect = *expect;
  KC_RETURN_IF_ERROR(read_optional(v, "name", c.name, [&](const Value& f) { return read_string(f); }));
  KC_ASSIGN_OR_RETURN(Value op_value, require(v, "op"));
  KC_ASSIGN_OR_RETURN(OpParams op, read_op_name(op_value));
  const std::initializer_list<std::pair<std::string_view, DType>> dtypes = {
      {"f64", DType::kF64}, {"f32", DType::kF32}, {"f16", DType::kF16}, {"bf16", DType::kBF16}};
  KC_RETURN_IF_ERROR(read_optional(v, "dtype", c.dtype, [&](const Value& f) { return read_enum<DType>(f, dtypes); }));
  if (auto f = v.get("accumulation")) {
    KC_ASSIGN_OR_RETURN(DType acc, read_enum<DType>(*f, dtypes));
    if (!accumulates(acc, c.dtype)) {
      std::vector<std::string> fit;  // the reverse of `dtypes`' order: narrowest first
      for (const auto& [name, d] : dtypes) {
        if (accumulates(d, c.dtype)) fit.insert(fit.begin(), std::string(name));
      }
      const std::string list = name_list(fit, " or ");
      return f->error(std::string(dtype_name(acc)) + " cannot accumulate dtype " + std::string(dtype_name(c.dtype)) +
                      " (an accumulator has at least the storage's precision and range; for " +
                      std::string(dtype_name(c.dtype)) + ": " + list + ")");
    }
    c.accumulation = acc;
  }
  KC_ASSIGN_OR_RETURN(Value input, require(v, "input"));
  KC_RETURN_IF_ERROR(read_input(input, &c.input));
  KC_RETURN_IF_ERROR(read_op(v, op, op_value.text(), &c));
  KC_RETURN_IF_ERROR(read_options(v, &c));
  return c;
}

}  // namespace kc::io
