// load_waivers (waiver_reader.h), as strict as a case file and by the same helpers: the
// file is read by io/input_file.h (a regular file within the size limit, one YAML
// document, exceptions and running out of memory as a Status) and its fields through
// io::Value (unknown and duplicate keys refused, every error at its file, line and field).
#include "io/waiver_reader.h"

#include <algorithm>
#include <optional>
#include <regex>

#include "core/check_table.h"
#include "io/case_yaml.h"
#include "io/input_file.h"

namespace kc {
namespace {

using io::Context;
using io::Value;

constexpr const char* kKind = "waiver file";

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// YYYY-MM-DD naming a day of the Gregorian calendar: 2028-02-29 is one, 2027-02-30 and
// 2100-02-29 are not (a waiver that never expires by mistake outlives its bug).
Status check_date(const Value& v, const std::string& text) {
  static const std::regex kDate("([0-9]{4})-([0-9]{2})-([0-9]{2})");
  static constexpr const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                            "July",    "August",   "September", "October", "November", "December"};
  std::smatch m;
  if (!std::regex_match(text, m, kDate))
    return v.error("expected a date YYYY-MM-DD, got " + io::quote_for_message(text));
  const int year = std::stoi(m[1]), month = std::stoi(m[2]), day = std::stoi(m[3]);
  if (month < 1 || month > 12) return v.error(text + " is not a date: there is no month " + m[2].str());
  if (day < 1) return v.error(text + " is not a date: there is no day " + m[3].str());
  const int days = days_in_month(year, month);
  if (day > days) {
    return v.error(text + " is not a date: " + kMonths[month - 1] + " " + m[1].str() + " has " + std::to_string(days) +
                   " days");
  }
  return ok_status();
}

StatusOr<std::string> required_text(const Value& entry, std::string_view key) {
  const std::optional<Value> f = entry.get(key);
  if (!f) return entry.missing(key);
  KC_ASSIGN_OR_RETURN(std::string s, io::read_string(*f));
  if (s.empty()) return f->error("must not be empty");
  return s;
}

// `check: argmax` or `check: [forward, argmax]`, each a check of the table, once.
StatusOr<std::vector<std::string>> read_checks(const Value& entry) {
  const std::optional<Value> c = entry.get("check");
  if (!c) return entry.missing("check");
  const std::vector<Value> items = c->is_sequence() ? c->items() : std::vector<Value>{*c};
  if (items.empty()) return c->error("must name at least one check");
  std::vector<std::string> checks;
  for (const Value& item : items) {
    if (!item.is_scalar()) return item.type_error("a check or a list of checks");
    if (find_check(item.text()) == nullptr) {
      return item.error("no check is named " + io::quote_for_message(item.text()) + " (see kcheck checks)");
    }
    if (std::find(checks.begin(), checks.end(), item.text()) != checks.end()) {
      return item.error("check " + item.text() + " is listed twice");
    }
    checks.push_back(item.text());
  }
  return checks;
}

// One waiver per check the entry names.
StatusOr<std::vector<Waiver>> read_entry(const Value& e, const std::string& path) {
  if (!e.is_map()) return e.type_error("a waiver (a map with case, backend, check, reason)");
  KC_RETURN_IF_ERROR(
      e.check_keys({"case", "backend", "check", "diagnosis", "reason", "expires", "cpu", "intermittent"}));
  Waiver w;
  KC_ASSIGN_OR_RETURN(w.case_glob, required_text(e, "case"));
  KC_ASSIGN_OR_RETURN(w.backend_glob, required_text(e, "backend"));
  if (const std::optional<Value> f = e.get("diagnosis")) {
    KC_ASSIGN_OR_RETURN(w.diagnosis, io::read_string(*f));
  }
  KC_ASSIGN_OR_RETURN(w.reason, required_text(e, "reason"));
  if (const std::optional<Value> f = e.get("expires")) {
    KC_ASSIGN_OR_RETURN(w.expires, io::read_string(*f));
    KC_RETURN_IF_ERROR(check_date(*f, w.expires));
  }
  if (const std::optional<Value> f = e.get("cpu")) {
    KC_ASSIGN_OR_RETURN(w.cpu, io::read_string(*f));
    const bool flag = !w.cpu.empty() && std::all_of(w.cpu.begin(), w.cpu.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
    });
    if (!flag)
      return f->error("expected a CPU flag as /proc/cpuinfo names it (avx512_bf16), got " +
                      io::quote_for_message(w.cpu));
  }
  if (const std::optional<Value> f = e.get("intermittent")) {
    KC_ASSIGN_OR_RETURN(w.intermittent, io::read_bool(*f));
    // Its pass is never XPASS, so nothing else would say when to look at it again.
    if (w.intermittent && w.expires.empty()) return f->error("an intermittent waiver needs expires (a date)");
  }
  w.source = path + ":" + std::to_string(e.line());
  KC_ASSIGN_OR_RETURN(std::vector<std::string> checks, read_checks(e));
  std::vector<Waiver> out;
  for (const std::string& check : checks) {
    out.push_back(w);
    out.back().check = check;
  }
  return out;
}

// `waivers: [...]`, or the list alone.
StatusOr<std::vector<Waiver>> read_waivers(const YAML::Node& root, const std::string& path) {
  Context ctx{path, {}};
  const int line = io::node_line(root, 1);
  if (root.IsNull())
    return invalid_argument(path + ":" + std::to_string(line) + ": empty file: expected waivers: [...]");
  const Value top(&ctx, root.IsSequence() ? "waivers" : "", {root}, line);
  if (!top.is_map() && !top.is_sequence()) return top.type_error("waivers: [...] (a list of waivers)");
  std::optional<Value> list = top;
  if (top.is_map()) {
    KC_RETURN_IF_ERROR(top.check_keys({"waivers"}));
    list = top.get("waivers");
    if (!list) return top.missing("waivers");
    if (!list->is_sequence()) return list->type_error("a list of waivers");
  }
  std::vector<Waiver> out;
  for (const Value& entry : list->items()) {
    KC_ASSIGN_OR_RETURN(std::vector<Waiver> ws, read_entry(entry, path));
    out.insert(out.end(), ws.begin(), ws.end());
  }
  return out;
}

}  // namespace

StatusOr<std::vector<Waiver>> load_waivers(const std::string& path) {
  KC_ASSIGN_OR_RETURN(std::string text, io::read_input_file(path, kKind));
  int line = 0;
  try {
    KC_ASSIGN_OR_RETURN(YAML::Node root,
                        io::parse_one_document(text, path, kKind, "put every waiver under one waivers: list", &line));
    return read_waivers(root, path);
  } catch (...) {  // yaml-cpp's own, or out of memory while the entries are read
    return io::exception_status(path, kKind, &line);
  }
}

}  // namespace kc
