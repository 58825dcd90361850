// Reading back what entry_json.cpp writes (the worker's entries, the ceilings), through
// yaml-cpp, whose exceptions end here.
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "bench/entry_json.h"

namespace kc::bench {
namespace {

// Numbers as json_number writes them: "nan" and "inf" as strings.
double number(const YAML::Node& n, const char* key, double fallback = 0.0) {
  const YAML::Node v = n[key];
  if (!v) return fallback;
  const std::string s = v.as<std::string>();
  if (s == "nan") return NAN;
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  return v.as<double>();
}

std::string text(const YAML::Node& n, const char* key) { return n[key] ? n[key].as<std::string>() : std::string(); }

DType dtype(const YAML::Node& n, const char* key) { return parse_dtype(text(n, key)).value_or(DType::kF32); }

void read_stats(const YAML::Node& n, BenchEntry& e) {
  e.stats.count = static_cast<int64_t>(number(n, "iterations"));
  e.stats.median = number(n, "real_time") / 1e6;
  e.stats.p25 = number(n, "p25_time") / 1e6;
  e.stats.p75 = number(n, "p75_time") / 1e6;
  e.stats.min = number(n, "min_time") / 1e6;
  e.stats.max = number(n, "max_time") / 1e6;
}

void read_fields(const YAML::Node& n, BenchEntry& e) {
  e.case_name = text(n, "kc_case"), e.file = text(n, "kc_file"), e.backend = text(n, "kc_backend");
  e.op = text(n, "kc_op"), e.mode = text(n, "kc_mode"), e.device = text(n, "kc_device");
  e.algorithm = text(n, "kc_algorithm"), e.recheck = text(n, "kc_recheck"), e.error = text(n, "error_message");
  e.skipped = text(n, "kc_skipped");
  e.geometry = text(n, "kc_geometry"), e.family = text(n, "kc_family"), e.resolution = text(n, "kc_resolution");
  e.dtype = dtype(n, "kc_dtype"), e.compute = dtype(n, "kc_compute");
  e.recheck_failed = number(n, "kc_recheck_failed") != 0;
  e.flops = number(n, "kc_flops"), e.bytes = number(n, "kc_bytes");
  e.transform_saving = number(n, "kc_transform_saving", 1.0);
  e.transform_unbounded = number(n, "kc_transform_unbounded") != 0;
  e.held_bytes = static_cast<int64_t>(number(n, "held_bytes"));
  e.workspace_bytes = static_cast<int64_t>(number(n, "workspace_bytes"));
  e.device_peak_bytes = static_cast<int64_t>(number(n, "device_peak_bytes", -1));
  e.rss_peak_bytes = static_cast<int64_t>(number(n, "rss_peak_bytes", -1));
  e.activation_peak_bytes = number(n, "activation_peak_bytes", -1);
  e.recomputations = number(n, "recomputed_layers", -1);
  e.spatial_rank = static_cast<int64_t>(number(n, "kc_spatial_rank"));
  e.activation_bytes = number(n, "kc_activation_bytes");
  e.y_bytes = number(n, "kc_y_bytes");
  e.cache_bytes = static_cast<int64_t>(number(n, "kc_cache_bytes"));
  e.instances = static_cast<int64_t>(number(n, "kc_instances", 1));
}

}  // namespace

StatusOr<BenchEntry> parse_entry_json(std::string_view json) {
  try {
    const YAML::Node n = YAML::Load(std::string(json));
    BenchEntry e;
    read_stats(n, e);
    read_fields(n, e);
    return e;
  } catch (const std::exception& ex) {
    return invalid_argument(std::string("bench entry: ") + ex.what());
  }
}

StatusOr<Ceiling> parse_ceiling_wire(std::string_view json) {
  try {
    const YAML::Node n = YAML::Load(std::string(json));
    Ceiling c;
    c.name = text(n, "kc_ceiling_name");
    c.device = text(n, "kc_ceiling_device");
    c.detail = text(n, "kc_detail");
    c.flops = static_cast<bool>(n["GFLOP/s"]);
    c.per_second = number(n, c.flops ? "GFLOP/s" : "GB/s") * 1e9;
    if (n["kc_dtype"]) c.dtype = parse_dtype(text(n, "kc_dtype"));
    return c;
  } catch (const std::exception& ex) {
    return invalid_argument(std::string("ceiling: ") + ex.what());
  }
}

}  // namespace kc::bench
