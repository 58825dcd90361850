// Reader rules an invalid case can break: what only the YAML reader can see (a wrong
// word, a quoted number, a typo in a key, a missing field, the other op's section).
// Each edits the text case_to_yaml() wrote for a valid case, in one place; keys are
// found as they are written there (`key: ` at the start of a line or after `{` or
// `, ` in a flow map), and a value runs to the next `,`, `}` or end of line, or to its
// closing bracket when it is a flow list or map.
#include <string_view>

#include "invalid.h"
#include "kc/case_io.h"
#include "ops/op_module.h"

namespace kc::gen::detail {
namespace {

// Where `key: ` starts as a key, or npos.
size_t find_key(const std::string& text, std::string_view key) {
  const std::string k = std::string(key) + ": ";
  for (size_t p = text.find(k); p != std::string::npos; p = text.find(k, p + 1)) {
    if (p == 0 || text[p - 1] == '\n' || text[p - 1] == '{' || (p >= 2 && text.compare(p - 2, 2, ", ") == 0)) return p;
  }
  return std::string::npos;
}

// The end of the value that starts at `p`.
size_t value_end(const std::string& text, size_t p) {
  int depth = 0;
  for (; p < text.size(); ++p) {
    const char ch = text[p];
    if (ch == '[' || ch == '{') ++depth;
    if ((ch == ']' || ch == '}') && depth-- == 0) return p;
    if (depth == 0 && (ch == ',' || ch == '\n')) return p;
  }
  return p;
}

std::string set_value(std::string text, std::string_view key, const std::string& value) {
  const size_t k = find_key(text, key);
  if (k == std::string::npos) return text;  // the rule's test then sees no refusal
  const size_t v = k + key.size() + 2;
  return text.replace(v, value_end(text, v) - v, value);
}

// Removes `key: value` with its separator (", " after it, or the line it is on).
std::string remove_entry(std::string text, std::string_view key) {
  const size_t k = find_key(text, key);
  if (k == std::string::npos) return text;
  size_t end = value_end(text, k + key.size() + 2);
  if (end < text.size() && (text[end] == ',' || text[end] == '\n')) ++end;
  if (end < text.size() && text[end] == ' ') ++end;
  return text.erase(k, end - k);
}

// The path of the op's params section in reader messages.
std::string section(const Case& c) { return is_stack(c) ? "stack.layer.conv" : std::string(op_section(c.op)); }
std::string yaml(const Case& c) { return case_to_yaml(c); }

Breakage bad_dtype(Case& c, size_t, int64_t) {
  return {"dtype: expected one of f64, f32, f16, bf16", set_value(yaml(c), "dtype", "f8")};
}
Breakage unknown_op(Case& c, size_t, int64_t) {
  return {"op: expected one of " + op_name_list(", "), set_value(yaml(c), "op", "conv4d")};
}
Breakage bad_fill(Case& c, size_t, int64_t) {
  return {"data.fill: expected one of random, normal, integer, ties, special, boundary",
          set_value(yaml(c), "fill", "noise")};
}
Breakage unknown_top_key(Case& c, size_t, int64_t) { return {"kernal: unknown key", yaml(c) + "kernal: [3]\n"}; }
Breakage misspelt_stride(Case& c, size_t, int64_t a) {
  std::string t = yaml(c);
  t.insert(find_key(t, "kernel"), "strides: " + std::to_string(a) + ", ");
  return {section(c) + ".strides: unknown key (did you mean stride?)", t};
}
Breakage quoted_batch(Case& c, size_t, int64_t) {
  return {"input.batch: expected an integer", set_value(yaml(c), "batch", "\"" + std::to_string(c.input.batch) + "\"")};
}
// A boolean field of the op written as a YAML 1.1 word.
Breakage bool_word(Case& c, size_t, int64_t a) {
  const std::string word = a % 2 ? "yes" : "on";
  const std::string field(std::visit([](const auto& p) { return bool_field(p); }, c.op));
  const std::string path = is_stack(c) ? "stack.layer." + field : section(c) + "." + field;
  return {path + ": expected true or false", set_value(yaml(c), field, word)};
}
Breakage fused_without_bias(Case& c, size_t, int64_t) {
  return {"conv_bias_relu always has a bias", set_value(yaml(c), "bias", "false")};
}
Breakage duplicate_check(Case& c, size_t, int64_t) {
  return {"check shape is listed twice", remove_entry(yaml(c), "checks") + "checks: [shape, gradcheck, shape]\n"};
}
Breakage unknown_check(Case& c, size_t, int64_t) {
  return {"expected one of shape, forward, backward", remove_entry(yaml(c), "checks") + "checks: [gradchek]\n"};
}
Breakage negative_seed(Case& c, size_t, int64_t a) {
  return {"data.seed: expected a non-negative integer", set_value(yaml(c), "seed", std::to_string(-a))};
}
// Another op's section beside the op's own: conv's, or a max pool's beside a conv.
Breakage other_section(Case& c, size_t, int64_t) {
  const std::string op(op_name(c.op));
  if (op_section(c.op) != ConvParams::kSection || is_stack(c)) {
    return {"conv: given, but op is " + op, yaml(c) + "conv: {out_channels: 1, kernel: 1}\n"};
  }
  return {"maxpool: given, but op is " + op, yaml(c) + "maxpool: {kernel: 2}\n"};
}
Breakage missing_kernel(Case& c, size_t, int64_t) {
  return {section(c) + ".kernel: missing (required)", remove_entry(yaml(c), "kernel")};
}
Breakage missing_op(Case& c, size_t, int64_t) { return {"op: missing (required)", remove_entry(yaml(c), "op")}; }
Breakage huge_tolerance(Case& c, size_t, int64_t) {
  return {"1e400 is outside the range of a double", set_value(yaml(c), "tolerance", "{rtol: 1e400, atol: 0}")};
}
Breakage negative_tolerance(Case& c, size_t, int64_t a) {
  return {"must be a finite number >= 0",
          set_value(yaml(c), "tolerance", "{rtol: -" + std::to_string(a) + ", atol: 0}")};
}
Breakage inline_count(Case& c, size_t, int64_t a) {
  std::string values = "0";
  for (int64_t i = 0; i < a; ++i) values += ", 1";
  return {"has " + std::to_string(a + 1) + " values but shape [1] needs 1",
          yaml(c) + "tensors:\n  x: {shape: [1], data: [" + values + "]}\n"};
}

// op: stack only.
Breakage checkpoint_word(Case& c, size_t, int64_t a) {
  const char* word = a % 2 ? "\"every\"" : "always";
  return {"checkpoint: expected none, sqrt or \"every:K\"", set_value(yaml(c), "checkpoint", word)};
}
Breakage checkpoint_every_zero(Case& c, size_t, int64_t a) {
  const std::string k = a % 2 ? "0" : "-" + std::to_string(a);
  return {"every:K needs an integer K >= 1, got \"every:" + k + "\"",
          set_value(yaml(c), "checkpoint", "\"every:" + k + "\"")};
}
Breakage missing_depth(Case& c, size_t, int64_t) {
  return {"stack.depth: missing (required)", remove_entry(yaml(c), "depth")};
}
Breakage stack_pool_inference(Case& c, size_t, int64_t) {
  return {"a stack's max pool runs in training mode", set_value(yaml(c), "mode", "inference")};
}

}  // namespace

std::vector<Rule> reader_rules(const Case& c) {
  std::vector<Rule> r = {
      {"bad_dtype", bad_dtype},
      {"unknown_op", unknown_op},
      {"bad_fill", bad_fill},
      {"unknown_top_key", unknown_top_key},
      {"misspelt_stride", misspelt_stride},
      {"quoted_batch", quoted_batch},
      {"bool_word", bool_word},
      {"duplicate_check", duplicate_check},
      {"unknown_check", unknown_check},
      {"negative_seed", negative_seed},
      {"other_section", other_section},
      {"missing_kernel", missing_kernel},
      {"missing_op", missing_op},
      {"huge_tolerance", huge_tolerance},
      {"negative_tolerance", negative_tolerance},
      {"inline_count", inline_count},
  };
  if (std::holds_alternative<ConvBiasReluParams>(c.op)) r.push_back({"fused_without_bias", fused_without_bias});
  if (const auto* p = std::get_if<StackParams>(&c.op)) {
    r.insert(r.end(), {{"checkpoint_word", checkpoint_word},
                       {"checkpoint_every_zero", checkpoint_every_zero},
                       {"missing_depth", missing_depth}});
    if (p->pool) r.push_back({"stack_pool_inference", stack_pool_inference});
  }
  return r;
}

}  // namespace kc::gen::detail
