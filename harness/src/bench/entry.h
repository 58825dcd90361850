// One timed entry of `kcheck bench`: a case x backend x op x cache mode with its order
// statistics, its cost by definition, its memory, and the re-check of its timed
// outputs; the run then sets its ceiling and peer figures (bench/judge.h). An entry with
// `error` set timed nothing (the op failed, or the backend does not run the case).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "bench/statistics.h"
#include "kc/dtype.h"

namespace kc::bench {

struct BenchEntry {
  std::string case_name, file, backend, op, mode;  // mode: "warm" or "cold"
  DType dtype = DType::kF32;
  DType compute = DType::kF32;  // the dtype its arithmetic runs in (the reference: f64)
  std::string device = "cpu";
  std::string algorithm, error;
  std::string skipped;  // why the backend does not run the case (not a failure; nothing timed)
  SampleStats stats;    // seconds
  double flops = 0.0, bytes = 0.0;
  double transform_saving = 1.0;     // bench/op_cost.h
  bool transform_unbounded = false;  // a transform with no fixed saving (FFT, other)
  int64_t held_bytes = 0, workspace_bytes = 0, device_peak_bytes = -1, rss_peak_bytes = -1;
  int64_t cache_bytes = 0, instances = 1;  // cold: prepared instances rotated
  std::string recheck = "passed";          // "passed", "mistrusted: ...", "FAILED: ..."
  bool recheck_failed = false;
  // The case's conv geometry without its relu (fused and bare convs of one shape share
  // it), the same without the input's extents (a family of resolutions), and those extents.
  std::string geometry, family, resolution;
  int64_t spatial_rank = 0;
  double activation_bytes = 0.0;  // x and y in the storage dtype
  double y_bytes = 0.0;           // y alone
  // Extra figures of the entry (a stack step's activation peak and recomputations).
  double activation_peak_bytes = -1.0, recomputations = -1.0;
  // Set by judge_entries().
  std::string ceiling, peer;
  double fraction = NAN, ratio_to_peer = NAN;
  bool fraction_over_one = false;

  std::string name() const { return case_name + "/" + backend + "/" + op + "/" + mode; }
  double seconds() const { return stats.median; }
  int64_t peak_bytes() const { return device_peak_bytes >= 0 ? device_peak_bytes : held_bytes + workspace_bytes; }
};

}  // namespace kc::bench
