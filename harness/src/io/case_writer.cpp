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

#include "kc/case_io.h"
#include "kc/overloaded.h"

namespace kc {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

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

// A YAML double-quoted scalar. Bytes >= 0x80 are passed through (UTF-8 text).
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const unsigned char u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", u);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string flow_map(const Entries& entries) {
  std::string s = "{";
  for (size_t i = 0; i < entries.size(); ++i) {
    s += (i ? ", " : "") + entries[i].first + ": " + entries[i].second;
  }
  return s + "}";
}

std::string flow_list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

std::string dims_flow(const Dims& d) {
  std::vector<std::string> items;
  for (int64_t v : d) items.push_back(std::to_string(v));
  return flow_list(items);
}

std::string padding_flow(const PadSpec& pad) {
  if (pad.kind != PadKind::kExplicit) return std::string(pad_kind_name(pad.kind));
  std::vector<std::string> pairs;
  for (const auto& [lo, hi] : pad.pairs) pairs.push_back(dims_flow({lo, hi}));
  return flow_list(pairs);
}

// stride, dilation and padding are left out when empty (their defaults).
void add_window(Entries* e, const Dims& stride, const Dims& dilation, const PadSpec& padding) {
  if (!stride.empty()) e->emplace_back("stride", dims_flow(stride));
  if (!dilation.empty()) e->emplace_back("dilation", dims_flow(dilation));
  if (padding.kind != PadKind::kExplicit || !padding.pairs.empty()) {
    e->emplace_back("padding", padding_flow(padding));
  }
}

std::string conv_flow(const ConvParams& p) {
  Entries e = {{"out_channels", std::to_string(p.out_channels)}, {"kernel", dims_flow(p.kernel)}};
  add_window(&e, p.stride, p.dilation, p.padding);
  e.emplace_back("groups", std::to_string(p.groups));
  e.emplace_back("padding_mode", std::string(padding_mode_name(p.padding_mode)));
  e.emplace_back("bias", p.bias ? "true" : "false");
  return flow_map(e);
}

std::string maxpool_flow(const MaxPoolParams& p) {
  Entries e = {{"kernel", dims_flow(p.kernel)}};
  add_window(&e, p.stride, p.dilation, p.padding);
  e.emplace_back("ceil_mode", p.ceil_mode ? "true" : "false");
  e.emplace_back("mode", std::string(pool_mode_name(p.mode)));
  e.emplace_back("tie", std::string(tie_rule_name(p.tie)));
  return flow_map(e);
}

std::string avgpool_flow(const AvgPoolParams& p) {
  Entries e = {{"kernel", dims_flow(p.kernel)}};
  add_window(&e, p.stride, {}, p.padding);
  e.emplace_back("ceil_mode", p.ceil_mode ? "true" : "false");
  e.emplace_back("count_include_pad", p.count_include_pad ? "true" : "false");
  if (p.divisor) e.emplace_back("divisor", std::to_string(*p.divisor));
  return flow_map(e);
}

std::string stack_flow(const StackParams& p) {
  Entries layer = {{std::string(ConvParams::kSection), conv_flow(p.conv)}, {"relu", p.relu ? "true" : "false"}};
  if (p.pool) layer.emplace_back(MaxPoolParams::kSection, maxpool_flow(*p.pool));
  return flow_map({{"depth", std::to_string(p.depth)},
                   {"layer", flow_map(layer)},
                   {"checkpoint", quote(checkpoint_name(p.checkpoint))}});
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
  e.emplace_back(op_section(c.op), std::visit(Overloaded{[](const ConvParams& p) { return conv_flow(p); },
                                                         [](const ConvBiasReluParams& p) { return conv_flow(p.conv); },
                                                         [](const MaxPoolParams& p) { return maxpool_flow(p); },
                                                         [](const AvgPoolParams& p) { return avgpool_flow(p); },
                                                         [](const StackParams& p) { return stack_flow(p); }},
                                              c.op));
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
