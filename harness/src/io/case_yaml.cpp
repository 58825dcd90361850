// Internal to kc_io: the layered Value view and the scalar readers (see case_yaml.h).
// Scalars are parsed here rather than through yaml-cpp's conversions so that the rules
// are exact: plain scalars only for numbers, decimal int64, YAML 1.2 booleans and
// NaN/inf spellings, no silent overflow.
#include "io/case_yaml.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>

namespace kc::io {
namespace {

Status located(const Context& ctx, int line, std::string_view path, std::string_view what) {
  std::string m = ctx.file + ":" + std::to_string(line) + ": ";
  if (!path.empty()) m += std::string(path) + ": ";
  return invalid_argument(m + std::string(what));
}

// Edits between a and b: insertions, deletions, substitutions, and a swap of two
// neighbours counted as one ("nmae" is one edit from "name"; optimal string alignment).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string unknown_key_message(std::string_view key, const std::vector<std::string_view>& allowed) {
  std::string list;
  std::string_view best;
  // Suggest only close matches (typos): at most 2 edits, and fewer than half the key's
  // characters ("a0" is not a typo of "op").
  size_t best_distance = 3;
  for (std::string_view a : allowed) {
    list += (list.empty() ? "" : ", ") + std::string(a);
    const size_t d = edit_distance(key, a);
    if (d < best_distance && 2 * d < key.size()) best_distance = d, best = a;
  }
  std::string m = "unknown key";
  if (!best.empty()) m += " (did you mean " + std::string(best) + "?)";
  return m + "; allowed: " + list;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

int node_line(const YAML::Node& n, int fallback) {
  const YAML::Mark m = n.Mark();
  return m.is_null() || m.line < 0 ? fallback : m.line + 1;
}

std::string quote_for_message(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20 || ch >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + (s.size() > kMax ? "...\"" : "\"");
}

Value::Value(Context* ctx, std::string path, std::vector<YAML::Node> layers, int line)
    : ctx_(ctx), path_(std::move(path)), line_(line) {
  for (YAML::Node& n : layers) {
    if (layers_.empty() || (layers_.front().IsMap() && n.IsMap())) layers_.push_back(n);
  }
}

Status Value::error(std::string_view what) const { return located(*ctx_, line_, path_, what); }

Status Value::type_error(std::string_view what) const {
  std::string got;
  if (node().IsNull()) {
    got = "nothing";
  } else if (is_map()) {
    got = "a map";
  } else if (is_sequence()) {
    got = "a list";
  } else {
    got = quote_for_message(text());
  }
  return error("expected " + std::string(what) + ", got " + got);
}

Status Value::plain_type_error(std::string_view what) const {
  if (!is_scalar() || !is_quoted()) return type_error(what);
  const std::string& tag = node().Tag();
  const std::string_view core = "tag:yaml.org,2002:";
  const std::string how = tag == "!"                ? "quoted"
                          : tag.rfind(core, 0) == 0 ? "tagged !!" + tag.substr(core.size())
                                                    : "tagged " + tag;
  return error("expected " + std::string(what) + ", got " + quote_for_message(text()) + " (" + how +
               ": numbers and booleans are plain scalars, neither quoted nor tagged)");
}

std::string Value::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string Value::item_path(size_t i) const { return path_ + "[" + std::to_string(i) + "]"; }

Status Value::check_keys(std::initializer_list<std::string_view> allowed) const {
  return check_keys(std::vector<std::string_view>(allowed));
}

Status Value::check_keys(const std::vector<std::string_view>& allowed) const {
  if (!is_map()) return type_error("a map");
  for (const YAML::Node& layer : layers_) {
    std::vector<std::string> seen;
    for (auto it = layer.begin(); it != layer.end(); ++it) {
      const int line = node_line(it->first, line_);
      if (!it->first.IsScalar()) return located(*ctx_, line, path_, "map keys must be plain names");
      const std::string& key = it->first.Scalar();
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
        return located(*ctx_, line, child_path(key), "duplicate key");
      }
      seen.push_back(key);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        return located(*ctx_, line, child_path(key), unknown_key_message(key, allowed));
      }
    }
  }
  return ok_status();
}

std::optional<Value> Value::get(std::string_view key) const {
  std::vector<YAML::Node> found;
  int line = line_;
  for (const YAML::Node& layer : layers_) {
    if (!layer.IsMap()) continue;
    for (auto it = layer.begin(); it != layer.end(); ++it) {
      if (!it->first.IsScalar() || it->first.Scalar() != key) continue;
      if (found.empty()) {
        const int key_line = node_line(it->first, line_);
        line = it->second.IsNull() ? key_line : node_line(it->second, key_line);
      }
      found.push_back(it->second);
      break;
    }
  }
  if (found.empty()) return std::nullopt;
  std::string path = child_path(key);
  ctx_->lines.emplace(path, line);
  return Value(ctx_, std::move(path), std::move(found), line);
}

bool Value::own(std::string_view key) const {
  const YAML::Node& n = node();
  if (!n.IsMap()) return false;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return true;
  }
  return false;
}

Status Value::missing(std::string_view key) const {
  return located(*ctx_, line_, child_path(key), "missing (required)");
}

std::vector<Value> Value::items() const {
  std::vector<Value> out;
  if (!is_sequence()) return out;
  out.reserve(node().size());
  size_t i = 0;
  for (auto it = node().begin(); it != node().end(); ++it, ++i) out.push_back(item(i, *it));
  return out;
}

Value Value::item(size_t i, const YAML::Node& n) const {
  return Value(ctx_, item_path(i), std::vector<YAML::Node>{n}, node_line(n, line_));
}

std::optional<int64_t> parse_int_text(std::string_view s, bool* overflow) {
  *overflow = false;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const size_t digits_from = !s.empty() && s.front() == '-' ? 1 : 0;
  if (s.size() == digits_from) return std::nullopt;
  for (size_t i = digits_from; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
  }
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    *overflow = true;
    return std::nullopt;
  }
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double_text(std::string_view s, bool* out_of_range) {
  *out_of_range = false;
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (equals_ignoring_case(s, ".nan") || equals_ignoring_case(s, "nan")) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (equals_ignoring_case(s, ".inf") || equals_ignoring_case(s, "inf") || equals_ignoring_case(s, "infinity")) {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '.')) {
    return std::nullopt;
  }
  double v = 0.0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (r.ptr != s.data() + s.size()) return std::nullopt;
  if (r.ec == std::errc::result_out_of_range) {
    *out_of_range = true;
    return std::nullopt;
  }
  if (r.ec != std::errc()) return std::nullopt;
  return negative ? -v : v;
}

StatusOr<int64_t> read_int(const Value& v) {
  if (!v.is_scalar() || v.is_quoted()) return v.plain_type_error("an integer");
  bool overflow = false;
  const std::optional<int64_t> n = parse_int_text(v.text(), &overflow);
  if (overflow) return v.error(v.text() + " is outside the int64 range");
  if (!n) return v.type_error("an integer");
  return *n;
}

StatusOr<uint64_t> read_uint64(const Value& v) {
  if (!v.is_scalar() || v.is_quoted()) return v.plain_type_error("a non-negative integer");
  std::string_view s = v.text();
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() ||
      !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return v.type_error("a non-negative integer");
  }
  uint64_t n = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), n);
  if (r.ec == std::errc::result_out_of_range) return v.error(v.text() + " is outside the uint64 range");
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return v.type_error("a non-negative integer");
  return n;
}

StatusOr<double> read_double(const Value& v) {
  if (!v.is_scalar() || v.is_quoted()) return v.plain_type_error("a number");
  bool out_of_range = false;
  const std::optional<double> d = parse_double_text(v.text(), &out_of_range);
  if (out_of_range) return v.error(v.text() + " is outside the range of a double");
  if (!d) return v.type_error("a number");
  return *d;
}

StatusOr<bool> read_bool(const Value& v) {
  if (v.is_scalar() && !v.is_quoted()) {
    const std::string& t = v.text();
    if (t == "true" || t == "True" || t == "TRUE") return true;
    if (t == "false" || t == "False" || t == "FALSE") return false;
  }
  return v.plain_type_error("true or false");
}

StatusOr<std::string> read_string(const Value& v) {
  if (!v.is_scalar()) return v.type_error("a string");
  return v.text();
}

}  // namespace kc::io
