// load_waivers (waiver_reader.h): yaml-cpp stays here, its exceptions caught.
#include "io/waiver_reader.h"

#include <yaml-cpp/yaml.h>

#include <regex>

#include "core/check_table.h"

namespace kc {
namespace {

// "FILE:LINE: waivers[i].field: reason"
Status bad(const std::string& path, const YAML::Node& at, size_t i, const std::string& field, const std::string& why) {
  return invalid_argument(path + ":" + std::to_string(at.Mark().line + 1) + ": waivers[" + std::to_string(i) + "]" +
                          (field.empty() ? "" : "." + field) + ": " + why);
}

StatusOr<std::string> text_field(const std::string& path, const YAML::Node& entry, size_t i, const char* field,
                                 bool required) {
  const YAML::Node v = entry[field];
  if (!v) {
    if (required) return bad(path, entry, i, field, "is missing");
    return std::string();
  }
  if (!v.IsScalar()) return bad(path, v, i, field, "must be a string");
  const std::string s = v.Scalar();
  if (required && s.empty()) return bad(path, v, i, field, "must not be empty");
  return s;
}

// One waiver per check the entry names: `check: argmax` or `check: [forward, argmax]`.
StatusOr<std::vector<Waiver>> read_entry(const std::string& path, const YAML::Node& e, size_t i) {
  if (!e.IsMap()) return bad(path, e, i, "", "must be a map with case, backend, check, reason");
  for (const auto& kv : e) {
    const std::string key = kv.first.Scalar();
    if (key != "case" && key != "backend" && key != "check" && key != "diagnosis" && key != "reason" &&
        key != "expires") {
      return bad(path, kv.first, i, key, "unknown field (case, backend, check, diagnosis, reason, expires)");
    }
  }
  Waiver w;
  KC_ASSIGN_OR_RETURN(w.case_glob, text_field(path, e, i, "case", true));
  KC_ASSIGN_OR_RETURN(w.backend_glob, text_field(path, e, i, "backend", true));
  KC_ASSIGN_OR_RETURN(w.diagnosis, text_field(path, e, i, "diagnosis", false));
  KC_ASSIGN_OR_RETURN(w.reason, text_field(path, e, i, "reason", true));
  KC_ASSIGN_OR_RETURN(w.expires, text_field(path, e, i, "expires", false));
  static const std::regex kDate("[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])");
  if (!w.expires.empty() && !std::regex_match(w.expires, kDate)) {
    return bad(path, e["expires"], i, "expires", "must be a date YYYY-MM-DD, got '" + w.expires + "'");
  }
  w.source = path + ":" + std::to_string(e.Mark().line + 1);
  std::vector<std::string> checks;
  if (const YAML::Node c = e["check"]; c && c.IsSequence()) {
    if (c.size() == 0) return bad(path, c, i, "check", "must name at least one check");
    for (const YAML::Node& k : c) {
      if (!k.IsScalar()) return bad(path, k, i, "check", "must be a check or a list of checks");
      checks.push_back(k.Scalar());
    }
  } else {
    KC_ASSIGN_OR_RETURN(std::string one, text_field(path, e, i, "check", true));
    checks.push_back(one);
  }
  std::vector<Waiver> out;
  for (const std::string& check : checks) {
    if (find_check(check) == nullptr) {
      return bad(path, e["check"], i, "check", "no check is named '" + check + "' (see kcheck checks)");
    }
    out.push_back(w);
    out.back().check = check;
  }
  return out;
}

}  // namespace

StatusOr<std::vector<Waiver>> load_waivers(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return invalid_argument(path + ": cannot be read");
  } catch (const YAML::Exception& e) {
    return invalid_argument(path + ":" + std::to_string(e.mark.line + 1) + ": not YAML: " + e.msg);
  }
  const YAML::Node list = root.IsMap() ? root["waivers"] : root;
  if (root.IsMap() && root.size() != 1) return invalid_argument(path + ": expected one key, waivers:");
  if (!list || !list.IsSequence()) return invalid_argument(path + ": waivers: must be a list of waivers");
  std::vector<Waiver> out;
  try {
    for (size_t i = 0; i < list.size(); ++i) {
      KC_ASSIGN_OR_RETURN(std::vector<Waiver> ws, read_entry(path, list[i], i));
      out.insert(out.end(), ws.begin(), ws.end());
    }
  } catch (const YAML::Exception& e) {
    return invalid_argument(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return out;
}

}  // namespace kc
