// Internal to kc_io: a layered, located view of YAML values for reading cases, and the
// scalar readers built on it. A Value is one field of a case as the case sees it: its
// own node first, then the `defaults:` node at the same path. For a map key the first
// layer holding it wins; when that holding is a map, later map holdings merge under it.
// Every Value knows its field path and line, so every error names file, line and field.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "kc/case.h"
#include "kc/status.h"

namespace kc::io {

// Per case: the file name for messages and the line of every field path read, so that
// errors from validate() (which name a field path) can be located.
struct Context {
  std::string file;
  std::map<std::string, int> lines;
};

class Value {
 public:
  Value(Context* ctx, std::string path, std::vector<YAML::Node> layers, int line);

  const std::string& path() const { return path_; }
  int line() const { return line_; }
  const YAML::Node& node() const { return layers_.front(); }
  bool is_map() const { return node().IsMap(); }
  bool is_sequence() const { return node().IsSequence(); }
  bool is_scalar() const { return node().IsScalar(); }
  // Quoted ("2", tag "!") or explicitly tagged (!!str 2, !!float 3): not a plain scalar
  // (tag "?"), so never read as a number or a boolean.
  bool is_quoted() const { return node().Tag() != "?"; }
  const std::string& text() const { return node().Scalar(); }  // scalars only

  // "file:line: path: what" as invalid_argument.
  Status error(std::string_view what) const;
  // `expected <what>, got <description of the value>`.
  Status type_error(std::string_view what) const;
  // type_error for a number or boolean, saying why a scalar that reads as one is not:
  // `got "1" (tagged !!float: ...)`, `got "2" (quoted: ...)`.
  Status plain_type_error(std::string_view what) const;
  // The path of a child: "conv" + "groups" -> "conv.groups"; "x" + 3 -> "x[3]".
  std::string child_path(std::string_view key) const;
  std::string item_path(size_t i) const;

  // Maps. check_keys refuses a value that is not a map, non-scalar or duplicate keys,
  // and keys outside `allowed` (with a did-you-mean hint), in every layer.
  Status check_keys(std::initializer_list<std::string_view> allowed) const;
  Status check_keys(const std::vector<std::string_view>& allowed) const;
  std::optional<Value> get(std::string_view key) const;  // merged across layers
  bool own(std::string_view key) const;                  // in the first layer itself

  // "path.key: missing (required)", located at this map.
  Status missing(std::string_view key) const;

  // Sequences (first layer only: lists are never merged).
  std::vector<Value> items() const;
  Value item(size_t i, const YAML::Node& n) const;  // element i of this sequence

 private:
  Context* ctx_;
  std::string path_;
  std::vector<YAML::Node> layers_;  // non-empty; later layers are maps when the first is
  int line_;
};

// 1-based line of a node, or `fallback` when the node has no mark.
int node_line(const YAML::Node& n, int fallback);
// A short, quoted, escaped rendering of a scalar text for messages.
std::string quote_for_message(std::string_view s);

// Scalar readers. Numbers and booleans must be plain (unquoted) scalars.
StatusOr<int64_t> read_int(const Value& v);
StatusOr<uint64_t> read_uint64(const Value& v);
StatusOr<double> read_double(const Value& v);
StatusOr<bool> read_bool(const Value& v);
StatusOr<std::string> read_string(const Value& v);  // any scalar, as written

// Parses plain-scalar text as a double (YAML 1.2 .nan/.inf forms, nan/inf, decimal);
// nullopt when it is not a number, and sets *out_of_range when it is one a double
// cannot hold (overflow or underflow).
std::optional<double> parse_double_text(std::string_view s, bool* out_of_range);
// Parses plain-scalar text as a decimal int64 (optional sign); nullopt when it is not
// an integer, and sets *overflow when it is one outside int64.
std::optional<int64_t> parse_int_text(std::string_view s, bool* overflow);

// One of a fixed set of names, e.g. {{"conv", Op::kConv}, ...}.
template <class T>
StatusOr<T> read_enum(const Value& v, std::initializer_list<std::pair<std::string_view, T>> names) {
  std::string list;
  for (const auto& [name, value] : names) {
    if (v.is_scalar() && v.text() == name) return value;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  return v.type_error("one of " + list);
}

// `data: zero:`, a list of regions (zero_reader.cpp); their ranges are validate()'s.
StatusOr<std::vector<ZeroRegion>> read_zero_regions(const Value& v);

// Reads the fields of one case from its layered map (case_reader.cpp). *expect is set
// as soon as `expect` has been read, before any other field can fail. Does not call
// validate().
StatusOr<Case> read_case(const Value& v, Expectation* expect);

}  // namespace kc::io
