// Internal to kc_io: the field readers and flow writers that the ops' YAML (each op
// module's `<op>_io.cpp`, docs/architecture.md) is written with. A reader returns the
// field or a located error (io/case_yaml.h's Value); a writer returns YAML flow text that
// reads back to the same value.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/case_yaml.h"
#include "kc/case.h"
#include "kc/status.h"

namespace kc::io {

// Reads field `key` of `v` into `out` with `read` when the case gives it; otherwise
// `out` keeps its default.
template <class T, class Read>
Status read_optional(const Value& v, std::string_view key, T& out, Read&& read) {
  if (auto f = v.get(key)) {
    KC_ASSIGN_OR_RETURN(out, read(*f));
  }
  return ok_status();
}

StatusOr<Value> require(const Value& v, std::string_view key);
// A per-dim list, or one integer for every spatial dim (rank 0: a list only).
StatusOr<Dims> read_dims(const Value& v, size_t rank);
// same, same_lower, valid, a number, a list of numbers or a list of [lo, hi] pairs.
StatusOr<PadSpec> read_padding(const Value& v, size_t rank);
StatusOr<PaddingMode> read_padding_mode(const Value& v);

// Flow text: `{k: v, ...}`, `[a, ...]`, `[1, 2]`, a padding as its keyword or pairs.
using Entries = std::vector<std::pair<std::string, std::string>>;
std::string flow_map(const Entries& entries);
std::string flow_list(const std::vector<std::string>& items);
std::string dims_flow(const Dims& d);
std::string padding_flow(const PadSpec& pad);
inline std::string bool_flow(bool b) { return b ? "true" : "false"; }
// A YAML double-quoted scalar. Bytes >= 0x80 are passed through (UTF-8 text).
std::string quote(std::string_view s);
// stride, dilation and padding are left out when empty (their defaults).
void add_window(Entries* e, const Dims& stride, const Dims& dilation, const PadSpec& padding);

}  // namespace kc::io
