// A small JSON reader for the trap zoo's end-to-end driver, which inspects kcheck's
// report JSON (DESIGN section 6). It reads what report.cpp writes (objects, arrays,
// strings with escapes, numbers, true/false/null) into a tree; it is not a general
// validating parser, and a malformed document yields an error with its offset.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kc::traps {

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0.0;
  std::string text;
  std::vector<Json> items;                           // kArray
  std::vector<std::pair<std::string, Json>> fields;  // kObject, in document order

  // The field `key` of an object, or a null value when there is none.
  const Json& operator[](std::string_view key) const {
    static const Json kNullValue;
    for (const auto& [k, v] : fields) {
      if (k == key) return v;
    }
    return kNullValue;
  }
};

namespace json_detail {

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  std::optional<Json> document(std::string* error) {
    Json v;
    if (!value(v) || (skip(), pos_ != s_.size())) {
      if (error) *error = "malformed JSON at offset " + std::to_string(pos_);
      return std::nullopt;
    }
    return v;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool value(Json& v) {
    skip();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{') return object(v);
    if (c == '[') return array(v);
    if (c == '"') return v.type = Json::Type::kString, string(v.text);
    if (literal("true")) return v.type = Json::Type::kBool, v.boolean = true, true;
    if (literal("false")) return v.type = Json::Type::kBool, true;
    if (literal("null")) return true;
    const std::string rest(s_.substr(pos_, 40));
    char* end = nullptr;
    v.number = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) return false;
    pos_ += static_cast<size_t>(end - rest.c_str());
    v.type = Json::Type::kNumber;
    return true;
  }

  bool object(Json& v) {
    v.type = Json::Type::kObject;
    ++pos_;
    if (eat('}')) return true;
    do {
      std::pair<std::string, Json> field;
      if (!(skip(), pos_ < s_.size() && s_[pos_] == '"') || !string(field.first) || !eat(':') || !value(field.second)) {
        return false;
      }
      v.fields.push_back(std::move(field));
    } while (eat(','));
    return eat('}');
  }

  bool array(Json& v) {
    v.type = Json::Type::kArray;
    ++pos_;
    if (eat(']')) return true;
    do {
      v.items.emplace_back();
      if (!value(v.items.back())) return false;
    } while (eat(','));
    return eat(']');
  }

  static void utf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(uint32_t& cp) {
    if (pos_ + 4 > s_.size()) return false;
    const std::string h(s_.substr(pos_, 4));
    char* end = nullptr;
    cp = static_cast<uint32_t>(std::strtoul(h.c_str(), &end, 16));
    pos_ += 4;
    return end == h.c_str() + 4;
  }

  bool string(std::string& out) {
    ++pos_;  // the opening quote
    while (pos_ < s_.size() && s_[pos_] != '"') {
      const char c = s_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return false;
      const char e = s_[pos_++];
      const std::string_view simple = "\"\\/bfnrt", meaning = "\"\\/\b\f\n\r\t";
      if (const size_t k = simple.find(e); k != std::string_view::npos) {
        out += meaning[k];
        continue;
      }
      uint32_t cp = 0;
      if (e != 'u' || !hex4(cp)) return false;
      if (cp >= 0xD800 && cp < 0xDC00 && literal("\\u")) {  // a surrogate pair
        uint32_t lo = 0;
        if (!hex4(lo)) return false;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      }
      utf8(cp, out);
    }
    return pos_ < s_.size() && s_[pos_++] == '"';
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace json_detail

inline std::optional<Json> parse_json(std::string_view text, std::string* error = nullptr) {
  return json_detail::Reader(text).document(error);
}

}  // namespace kc::traps
