// kcheck bench JSON written for a test: one machine, one date, and per entry its backend,
// median time and spread, so that a regression can be placed inside or outside it.
#pragma once

#include <string>
#include <vector>

namespace kc::bench {

struct SyntheticEntry {
  std::string backend;
  double ms = 1.0;
  double spread = 0.02;
  std::string recheck = "passed";
};

struct SyntheticRun {
  std::string machine = "box-a";
  std::string date = "2026-11-20T10:00:00+00:00";
  std::string commit = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  std::vector<SyntheticEntry> entries = {{"mykern"}, {"onednn"}};
  bool target_met = true;
  int failures = 0;
};

inline std::string synthetic_json(const SyntheticRun& r) {
  std::string b;
  for (const SyntheticEntry& e : r.entries) {
    const std::string us = std::to_string(1e3 * e.ms);
    b += std::string(b.empty() ? "" : ",\n") + "{\"name\": \"c/" + e.backend +
         "/conv_forward/warm\", \"run_type\": \"iteration\", \"real_time\": " + us +
         ", \"time_unit\": \"us\", \"kc_case\": \"c\", \"kc_backend\": \"" + e.backend +
         "\", \"kc_op\": \"conv_forward\", \"kc_mode\": \"warm\", \"kc_dtype\": \"f32\", \"kc_device\": \"cpu\", "
         "\"kc_peer\": \"onednn\", \"kc_ceiling\": \"onednn gemm f32\", \"kc_recheck\": \"" +
         e.recheck + "\", \"GFLOP/s\": " + std::to_string(10.0 / e.ms) +
         ", \"fraction_of_ceiling\": " + std::to_string(0.1 / e.ms) +
         ", \"ratio_to_peer\": 1, \"spread\": " + std::to_string(e.spread) + "}";
  }
  return "{\"context\": {\"date\": \"" + r.date + "\", \"host_name\": \"h\", \"kc_commit\": \"" + r.commit +
         "\", \"kc_machine\": \"" + r.machine + "\"},\n\"benchmarks\": [" + b +
         "],\n\"kc_targets\": [{\"key\": \"t\", \"what\": \"mykern / onednn\", \"value\": 0.7, \"goal\": \">= 0.5\", "
         "\"met\": " +
         (r.target_met ? "true" : "false") + ", \"detail\": \"d\"}],\n\"kc_failures\": " + std::to_string(r.failures) +
         "}\n";
}

}  // namespace kc::bench
