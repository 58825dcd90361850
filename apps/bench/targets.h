// The speed and memory targets of kcheck-bench, each a ratio between entries of one
// run (docs/bench.md, "Targets"), as one table: kcheck-bench prints them after its run and
// kcheck-dashboard judges every recorded run by the same definitions.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kc::bench {

// One benchmark entry of a run: its real time per iteration (the median aggregate when
// repetitions ran) and its counters.
struct Entry {
  double seconds = 0.0;
  std::map<std::string, double> counters;
};
using Entries = std::map<std::string, Entry, std::less<>>;  // by function name ("BM_EigenGemm")

enum class TargetKind {
  kGflopsAtLeast,      // GFLOP/s(a) / GFLOP/s(b) >= target
  kTimeRatioAtMost,    // time(a) / time(b) <= target
  kSecondsAtMost,      // time(a) <= target seconds
  kCounterWithinBound  // counter(a, counter) <= counter(a, bound)
};

struct Target {
  std::string_view key;   // stable name, for dashboards
  std::string_view what;  // what a reader is told
  TargetKind kind;
  std::string_view a, b;            // entries (b: the peer of a ratio)
  std::string_view counter, bound;  // kCounterWithinBound
  double target = 0.0;
};

std::span<const Target> targets();

struct Measure {
  double value = 0.0;
  double limit = 0.0;  // the target, or the bound counter's value
  bool met = false;
  std::string detail;  // the figures it was made from
  std::string goal;    // ">= 0.40", "<= 2.00 s", "<= 1572864 (sqrt_bound_bytes)"
};

// A measured value as reports show it: bytes and counts whole, ratios and seconds to 3
// decimals.
std::string format_value(const Target& t, double value);

// The target measured on `entries`, or nothing when an entry it needs is missing (not
// in the run, e.g. filtered out) or has no positive figure to divide by.
std::optional<Measure> evaluate(const Target& t, const Entries& entries);

}  // namespace kc::bench
