// The ops' YAML field readers and flow writers (io/params_yaml.h).
#include "io/params_yaml.h"

#include <cstdio>

#include "kc/shape.h"

namespace kc::io {

StatusOr<Value> require(const Value& v, std::string_view key) {
  if (std::optional<Value> f = v.get(key)) return *f;
  return v.missing(key);
}

// A per-dim list, or one integer for every spatial dim.
StatusOr<Dims> read_dims(const Value& v, size_t rank) {
  if (v.is_scalar()) {
    KC_ASSIGN_OR_RETURN(int64_t n, read_int(v));
    return Dims(rank, n);
  }
  if (!v.is_sequence()) return v.type_error("a list of integers or one integer");
  Dims d;
  for (const Value& item : v.items()) {
    KC_ASSIGN_OR_RETURN(int64_t n, read_int(item));
    d.push_back(n);
  }
  return d;
}

namespace {

StatusOr<std::array<int64_t, 2>> read_pad_pair(const Value& item) {
  if (item.is_scalar()) {
    KC_ASSIGN_OR_RETURN(int64_t n, read_int(item));
    return std::array<int64_t, 2>{n, n};
  }
  const std::vector<Value> lohi = item.items();
  if (lohi.size() != 2) return item.type_error("a number or a [lo, hi] pair");
  KC_ASSIGN_OR_RETURN(int64_t lo, read_int(lohi[0]));
  KC_ASSIGN_OR_RETURN(int64_t hi, read_int(lohi[1]));
  return std::array<int64_t, 2>{lo, hi};
}

}  // namespace

StatusOr<PadSpec> read_padding(const Value& v, size_t rank) {
  constexpr std::string_view kForms =
      "same, same_lower, valid, a number, a list of numbers or a list of [lo, hi] pairs";
  PadSpec pad;
  if (v.is_scalar() && !v.is_quoted()) {
    bool overflow = false;
    if (std::optional<int64_t> n = parse_int_text(v.text(), &overflow)) {
      pad.pairs.assign(rank, {*n, *n});
      return pad;
    }
    if (overflow) return v.error(v.text() + " is outside the int64 range");
  }
  if (v.is_scalar()) {
    KC_ASSIGN_OR_RETURN(
        pad.kind, read_enum<PadKind>(
                      v, {{"same", PadKind::kSame}, {"same_lower", PadKind::kSameLower}, {"valid", PadKind::kValid}}));
    return pad;
  }
  if (!v.is_sequence()) return v.type_error(kForms);
  if (v.node().size() == 0)
    return v.error("an empty list: give one entry per spatial dim (or leave padding out for none)");
  for (const Value& item : v.items()) {
    KC_ASSIGN_OR_RETURN(auto pair, read_pad_pair(item));
    pad.pairs.push_back(pair);
  }
  return pad;
}

StatusOr<PaddingMode> read_padding_mode(const Value& v) {
  return read_enum<PaddingMode>(v, {{"zeros", PaddingMode::kZeros},
                                    {"reflect", PaddingMode::kReflect},
                                    {"replicate", PaddingMode::kReplicate},
                                    {"circular", PaddingMode::kCircular}});
}

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

}  // namespace kc::io
