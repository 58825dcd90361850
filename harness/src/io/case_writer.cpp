// Writing a Case as YAML: a block-style one-case file, and the one-line reproducer (a
// flow map). Both read back to an equal Case: doubles in the shortest form that
// round-trips (std::to_chars), NaN/inf as .nan/.inf/-.inf, strings double-quoted with
// escapes, padding as a keyword or [lo, hi] pairs, indices as integers.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "io/params_yaml.h"
#include "kc/case_io.h"
#include "ops/op_module.h"

namespace kc {
namespace {

using io::dims_flow;
using io::Entries;
using io::flow_list;
using io::flow_map;
using io::quote;

std::string format_double(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Indices are integers; anything else (a hand-built bad case) is written as a number
// and refused on reading.
std::string format_index(double v) {
  if (v == std::floor(v) && std::abs(v) < 9.2e18) return std::to_string(static_cast<int64_t>(v));
  return format_double(v);
}

std::string tolerance_flow(const Tolerance& t) {
  switch (t.kind) {
    case ToleranceKind::kBound:
      return "bound";
    case ToleranceKind::kExact:
      return "exact";
    case ToleranceKind::kExplicit:
      return flow_map({{"rtol", format_double(t.rtol)}, {"atol", format_double(t.atol)}});
  }
  return "bound";
}

// `{tensor: x, sample: 1, channel: 0, box: [[0, 8], [8, 16]]}`, the parts left out
// that the region leaves out.
std::string zero_flow(const ZeroRegion& r) {
  Entries e = {{"tensor", std::string(zero_tensor_name(r.tensor))}};
  if (r.sample) e.emplace_back("sample", std::to_string(*r.sample));
  if (r.channel) e.emplace_back("channel", std::to_string(*r.channel));
  if (!r.box.empty()) {
    std::vector<std::string> pairs;
    for (const auto& [lo, hi] : r.box) pairs.push_back(dims_flow({lo, hi}));
    e.emplace_back("box", flow_list(pairs));
  }
  return flow_map(e);
}

std::string data_flow(const DataSpec& d) {
  Entries e = {{"seed", std::to_string(d.seed)}, {"fill", std::string(fill_name(d.fill))}};
  if (!d.zero.empty()) {
    std::vector<std::string> regions;
    for (const ZeroRegion& r : d.zero) regions.push_back(zero_flow(r));
    e.emplace_back("zero", flow_list(regions));
  }
  return flow_map(e);
}

// Every field up to and excluding tensors/expected/expect, in file order.
Entries head_entries(const Case& c) {
  Entries e;
  if (!c.name.empty()) e.emplace_back("name", quote(c.name));
  e.emplace_back("op", std::string(op_name(c.op)));
  e.emplace_back("dtype", std::string(dtype_name(c.dtype)));
  e.emplace_back("input", flow_map({{"batch", std::to_string(c.input.batch)},
                                    {"channels", std::to_string(c.input.channels)},
                                    {"spatial", dims_flow(c.input.spatial)}}));
  e.emplace_back(op_section(c.op), std::visit([](const auto& p) { return io::params_flow(p); }, c.op));
  e.emplace_back("data", data_flow(c.data));
  if (!c.checks.empty()) e.emplace_back("checks", flow_list(c.checks));
  e.emplace_back("tolerance", tolerance_flow(c.tolerance));
  if (c.accumulation) e.emplace_back("accumulation", std::string(dtype_name(*c.accumulation)));
  e.emplace_back("deterministic", c.deterministic ? "true" : "false");
  return e;
}

std::vector<std::string> values_text(const std::string& name, const Tensor& t) {
  std::vector<std::string> items;
  items.reserve(t.data.size());
  for (double v : t.data) items.push_back(name == "indices" ? format_index(v) : format_double(v));
  return items;
}

std::string tensors_flow(const std::map<std::string, Tensor>& tensors) {
  Entries e;
  for (const auto& [name, t] : tensors) {
    e.emplace_back(name, flow_map({{"shape", dims_flow(t.shape)}, {"data", flow_list(values_text(name, t))}}));
  }
  return flow_map(e);
}

// A block section of tensors; long data lists are wrapped (continuation lines are
// indented deeper than their key, as YAML requires of flow content).
std::string tensors_block(const std::string& key, const std::map<std::string, Tensor>& tensors) {
  constexpr size_t kWidth = 100;
  std::string s = key + ":\n";
  for (const auto& [name, t] : tensors) {
    s += "  " + name + ":\n    shape: " + dims_flow(t.shape) + "\n    data: [";
    size_t column = 11;
    const std::vector<std::string> items = values_text(name, t);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0 && column + items[i].size() + 2 > kWidth) {
        s += ",\n      ";
        column = 6;
      } else if (i > 0) {
        s += ", ";
        column += 2;
      }
      s += items[i];
      column += items[i].size();
    }
    s += "]\n";
  }
  return s;
}

std::string expect_flow(const Expectation& e) { return e.pass ? "pass" : flow_map({{"error", quote(e.error)}}); }

}  // namespace

std::string case_to_yaml(const Case& c) {
  std::string s;
  for (const auto& [key, value] : head_entries(c)) s += key + ": " + value + "\n";
  if (!c.tensors.empty()) s += tensors_block("tensors", c.tensors);
  if (!c.expected.empty()) s += tensors_block("expected", c.expected);
  if (!c.expect.pass) s += "expect: " + expect_flow(c.expect) + "\n";
  return s;
}

std::string case_to_one_line(const Case& c) {
  Entries e = head_entries(c);
  if (!c.tensors.empty()) e.emplace_back("tensors", tensors_flow(c.tensors));
  if (!c.expected.empty()) e.emplace_back("expected", tensors_flow(c.expected));
  if (!c.expect.pass) e.emplace_back("expect", expect_flow(c.expect));
  return flow_map(e);
}

}  // namespace kc
