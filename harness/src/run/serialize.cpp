// CaseResult <-> text for the worker pipe: every field as "<length>:<bytes>", numbers
// in %a hex so doubles cross the pipe exactly.
#include <cstdio>
#include <cstdlib>

#include "run/isolate.h"

namespace kc {
namespace {

void put(std::string& out, const std::string& s) { out += std::to_string(s.size()) + ":" + s; }
void put(std::string& out, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  put(out, std::string(buf));
}

struct Reader {
  const std::string& s;
  size_t pos = 0;
  bool ok = true;
  std::string str() {
    const size_t colon = s.find(':', pos);
    if (!ok || colon == std::string::npos) return fail();
    char* end = nullptr;
    const unsigned long long n = std::strtoull(s.c_str() + pos, &end, 10);
    if (end != s.c_str() + colon || colon + 1 + n > s.size()) return fail();
    std::string r = s.substr(colon + 1, n);
    pos = colon + 1 + n;
    return r;
  }
  double num() { return std::strtod(str().c_str(), nullptr); }
  int64_t integer() { return static_cast<int64_t>(num()); }
  // A disposition, failing on a value no Disposition has (garbage on the pipe).
  Disposition disposition() {
    const int64_t d = integer();
    if (d < 0 || d > static_cast<int64_t>(Disposition::kXpass)) fail();
    return ok ? static_cast<Disposition>(d) : Disposition::kCrashed;
  }
  std::string fail() {
    ok = false;
    return {};
  }
};

}  // namespace

std::string serialize(const CaseResult& r) {
  std::string out;
  for (const std::string* s : {&r.case_name, &r.source, &r.backend, &r.message, &r.reproducer}) put(out, *s);
  put(out, static_cast<double>(r.disposition));
  put(out, r.seconds);
  put(out, static_cast<double>(r.fields.size()));
  for (const auto& [k, v] : r.fields) {
    put(out, k);
    put(out, v);
  }
  put(out, static_cast<double>(r.checks.size()));
  for (const CheckResult& c : r.checks) {
    put(out, c.name);
    put(out, static_cast<double>(c.disposition));
    put(out, c.message);
    put(out, c.max_error_ratio);
    put(out, c.max_abs_error);
    put(out, c.seconds);
    put(out, static_cast<double>(c.worst.size()));
    for (const WorstPoint& w : c.worst) {
      put(out, w.tensor);
      put(out, static_cast<double>(w.index.size()));
      for (int64_t i : w.index) put(out, static_cast<double>(i));
      put(out, w.candidate);
      put(out, w.reference);
      put(out, w.bound);
    }
  }
  return out;
}

bool deserialize(const std::string& text, CaseResult& r) {
  Reader in{text};
  for (std::string* s : {&r.case_name, &r.source, &r.backend, &r.message, &r.reproducer}) *s = in.str();
  r.disposition = in.disposition();
  r.seconds = in.num();
  const int64_t fields = in.integer();
  for (int64_t i = 0; in.ok && i < fields; ++i) {
    std::string k = in.str();
    r.fields.emplace_back(std::move(k), in.str());
  }
  const int64_t checks = in.integer();
  for (int64_t i = 0; in.ok && i < checks; ++i) {
    CheckResult c;
    c.name = in.str();
    c.disposition = in.disposition();
    c.message = in.str();
    c.max_error_ratio = in.num();
    c.max_abs_error = in.num();
    c.seconds = in.num();
    const int64_t worst = in.integer();
    for (int64_t k = 0; in.ok && k < worst; ++k) {
      WorstPoint w;
      w.tensor = in.str();
      const int64_t rank = in.integer();
      for (int64_t a = 0; in.ok && a < rank; ++a) w.index.push_back(in.integer());
      w.candidate = in.num();
      w.reference = in.num();
      w.bound = in.num();
      c.worst.push_back(std::move(w));
    }
    r.checks.push_back(std::move(c));
  }
  return in.ok && in.pos == text.size();
}

}  // namespace kc
