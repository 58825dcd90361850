// Helpers shared by the rule checks (argmax, padding, determinism, integrity):
// findings grouped by rule, coordinate and number formatting, per-element bounds of
// the tolerance model, and bitwise differences between tensors.
// Invariant: nothing here throws or allocates in proportion to more than one tensor.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/format.h"
#include "judge/tolerance.h"
#include "kc/dtype.h"
#include "kc/result.h"
#include "kc/tensor.h"

namespace kc::checks::rules {

// Violations grouped by rule: the first diagnosis of each and how often the rule broke,
// in the order the rules were first broken. Thousands of windows breaking one rule make
// one line, and a second, different bug still shows.
class Findings {
 public:
  void add(const std::string& rule, std::string detail) {
    for (Item& it : items_) {
      if (it.rule == rule) {
        ++it.count;
        return;
      }
    }
    items_.push_back({rule, std::move(detail), 1});
  }
  bool empty() const { return items_.empty(); }
  bool has(const std::string& rule) const {
    for (const Item& it : items_) {
      if (it.rule == rule) return true;
    }
    return false;
  }
  // "detail (and 4 more like it); detail of the next rule"; `more` names the repeats.
  std::string summary(const std::string& more = "more like it") const {
    std::string s;
    for (const Item& it : items_) {
      if (!s.empty()) s += "; ";
      s += it.detail;
      if (it.count > 1) s += " (and " + std::to_string(it.count - 1) + " " + more + ")";
    }
    return s;
  }

 private:
  struct Item {
    std::string rule;
    std::string detail;
    int64_t count = 0;
  };
  std::vector<Item> items_;
};

// Within the bound, NaN meeting NaN and an infinity the same infinity.
inline bool within(double cand, double ref, double bound) {
  if (std::isnan(ref) || std::isnan(cand)) return std::isnan(ref) && std::isnan(cand);
  if (std::isinf(ref) || std::isinf(cand)) return cand == ref;
  return std::abs(cand - ref) <= bound;
}

inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Elements whose bits differ (NaN payloads and the sign of zero included), the first
// of them, and the largest |a - b| over differing pairs that are both finite.
struct BitDiff {
  int64_t count = 0;
  int64_t first = -1;
  double max_abs = 0.0;
};

inline BitDiff bit_diff(const HostVector<double>& a, const HostVector<double>& b) {
  BitDiff d;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (same_bits(a[i], b[i])) continue;
    if (d.count++ == 0) d.first = static_cast<int64_t>(i);
    if (std::isfinite(a[i]) && std::isfinite(b[i])) d.max_abs = std::max(d.max_abs, std::abs(a[i] - b[i]));
  }
  d.count += static_cast<int64_t>(std::max(a.size(), b.size()) - n);  // a size change differs too
  return d;
}

}  // namespace kc::checks::rules
