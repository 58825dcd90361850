// Case files: reading them (one case, or `cases:` with `defaults:`) and turning every
// problem into a located error entry (finding them: case_files.cpp). This is the I/O
// edge: yaml-cpp's exceptions (and any other, std::bad_alloc included) are caught here
// and never leave.
#include "kc/case_io.h"

#include <algorithm>
#include <cctype>

#include "core/check_table.h"
#include "core/validate.h"
#include "io/case_yaml.h"
#include "io/input_file.h"

namespace kc {
namespace {

using io::Context;
using io::Value;

LoadedCase error_entry(const std::string& file, int line, Status status) {
  LoadedCase e;
  e.file = file;
  e.line = line;
  e.c = std::move(status);
  return e;
}

std::string where(const std::string& file, int line) { return file + ":" + std::to_string(line); }

// The line of the field a validate() message starts with ("conv.padding[0][1]: ..."),
// trying shorter paths when the exact one was not read; `fallback` when none matches.
int locate(const Context& ctx, const std::string& message, int fallback) {
  const size_t colon = message.find(':');
  if (colon == std::string::npos || colon == 0) return fallback;
  std::string path = message.substr(0, colon);
  if (path.rfind("stack layer ", 0) == 0) path = "stack";  // a layer's error: the stack's line
  const bool is_path = std::all_of(path.begin(), path.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '[' || ch == ']';
  });
  if (!is_path) return fallback;
  // An op's fields are named after it, and written under its section (conv_bias_relu's
  // under `conv:`).
  for (const OpParams& op : all_ops()) {
    const std::string_view name = op_name(op);
    if (path.rfind(name, 0) == 0 && (path.size() == name.size() || path[name.size()] == '.')) {
      path = std::string(op_section(op)) + path.substr(name.size());
      break;
    }
  }
  while (!path.empty()) {
    if (auto it = ctx.lines.find(path); it != ctx.lines.end()) return it->second;
    const size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos) break;
    path.resize(cut);
  }
  return fallback;
}

// One case: its fields, then validate(), each error located.
LoadedCase load_one(const std::string& file, const YAML::Node& node, const YAML::Node& defaults) {
  Context ctx{file, {}};
  const int line = io::node_line(node, 1);
  std::vector<YAML::Node> layers = {node};
  if (defaults.IsDefined() && defaults.IsMap()) layers.push_back(defaults);
  const Value v(&ctx, "", layers, line);
  LoadedCase entry;
  entry.file = file;
  entry.line = line;
  StatusOr<Case> c = io::read_case(v, &entry.expect);
  if (!c.ok()) {
    entry.c = c.status();
    return entry;
  }
  if (Status s = validate(*c); !s.ok()) {
    entry.c = s.with_context(where(file, locate(ctx, s.message(), line)));
    if (is_stack(*c) && c->tensors.empty() && c->expected.empty()) entry.unvalidated = std::move(*c);
    return entry;
  }
  if (Status s = validate_checks(*c, !v.own("checks")); !s.ok()) {
    entry.c = s.with_context(where(file, locate(ctx, s.message(), line)));
    return entry;
  }
  // Shared defaults mean "where they apply": the case keeps those, so that its reproducer
  // names no check that the reader refuses on a case of its own.
  if (!v.own("checks")) c->checks = checks_that_apply(*c);
  c->source = where(file, line);
  entry.c = std::move(c);
  return entry;
}

// An alias (`- *c`) costs a few bytes of YAML and a full copy of the tensors it names,
// so the file's inline values are counted as they are read, aliases each time.
int64_t inline_values(const LoadedCase& one) {
  if (!one.c.ok()) return 0;
  int64_t n = 0;
  for (const auto& [name, t] : one.c->tensors) n += t.size();
  for (const auto& [name, t] : one.c->expected) n += t.size();
  return n;
}

Status too_many_values(const std::string& file, int line) {
  return resource_exhausted(where(file, line) + ": the file's inline tensors hold more than " +
                            std::to_string(kMaxFileInlineValues) +
                            " values in all up to this case (an alias counts each time it is used); split the file");
}

std::vector<LoadedCase> load_document(const std::string& file, const YAML::Node& doc) {
  Context file_ctx{file, {}};
  const Value root(&file_ctx, "", {doc}, io::node_line(doc, 1));
  if (!root.is_map()) {
    return {error_entry(file, root.line(), root.type_error("a case (a map of case fields) or cases: [...]"))};
  }
  if (!root.own("cases")) return {load_one(file, doc, YAML::Node())};
  if (Status s = root.check_keys({"cases", "defaults"}); !s.ok()) return {error_entry(file, root.line(), s)};
  const Value cases = *root.get("cases");
  const std::optional<Value> defaults = root.get("defaults");
  if (defaults && !defaults->is_map()) {
    return {error_entry(file, defaults->line(), defaults->type_error("a map of case fields"))};
  }
  if (!cases.is_sequence() || cases.node().size() == 0) {
    return {error_entry(file, cases.line(), cases.type_error("a non-empty list of cases"))};
  }
  std::vector<LoadedCase> out;
  int64_t values = 0;  // inline tensor values read so far in the file
  for (const Value& item : cases.items()) {
    if (!item.is_map()) {
      out.push_back(error_entry(file, item.line(), item.type_error("a case (a map of case fields)")));
      continue;
    }
    if (values > kMaxFileInlineValues) {  // refused unread: reading is what costs
      out.push_back(error_entry(file, item.line(), too_many_values(file, item.line())));
      continue;
    }
    LoadedCase one = load_one(file, item.node(), defaults ? defaults->node() : YAML::Node());
    values += inline_values(one);
    if (values > kMaxFileInlineValues) one = error_entry(file, one.line, too_many_values(file, one.line));
    out.push_back(std::move(one));
  }
  return out;
}

std::vector<LoadedCase> parse_text(std::string_view text, const std::string& file) {
  int line = 0;
  StatusOr<YAML::Node> doc = io::parse_one_document(text, file, "case file", "put several cases under cases:", &line);
  if (!doc.ok()) return {error_entry(file, line, doc.status())};
  if (doc->IsNull()) {
    return {error_entry(file, 1, invalid_argument(where(file, 1) + ": empty file: expected a case or cases: [...]"))};
  }
  return load_document(file, *doc);
}

}  // namespace

std::vector<LoadedCase> parse_cases(std::string_view yaml_text, const std::string& file_name) {
  const std::string file = file_name.empty() ? "<string>" : file_name;
  try {
    return parse_text(yaml_text, file);
  } catch (...) {  // a node's own exceptions while the cases are read, or out of memory
    int line = 0;
    const Status s = io::exception_status(file, "case file", &line);
    return {error_entry(file, line, s)};
  }
}

std::vector<LoadedCase> load_case_file(const std::string& path) {
  StatusOr<std::string> text = io::read_input_file(path, "case file");
  if (!text.ok()) return {error_entry(path, 0, text.status())};
  return parse_cases(*text, path);
}

std::string source_of(const LoadedCase& lc) { return lc.line > 0 ? lc.file + ":" + std::to_string(lc.line) : lc.file; }

std::string_view source_file_of(std::string_view source) {
  const size_t colon = source.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == source.size()) return source;
  for (size_t i = colon + 1; i < source.size(); ++i) {
    if (source[i] < '0' || source[i] > '9') return source;
  }
  return source.substr(0, colon);
}

}  // namespace kc
