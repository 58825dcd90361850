#include "bench/entry_json.h"

#include <yaml-cpp/yaml.h>

#include "run/json_writer.h"

namespace kc::bench {
namespace {

// Appends "key": value pairs to an object being written.
struct Fields {
  std::string text;
  void str(std::string_view k, std::string_view v) { add(k, json_string(v)); }
  void num(std::string_view k, double v) { add(k, json_number(v)); }
  void opt(std::string_view k, double v) {  // left out when not measured (NaN)
    if (!std::isnan(v)) num(k, v);
  }
  void add(std::string_view k, const std::string& v) {
    text += (text.empty() ? "{" : ", ") + json_string(k) + ": " + v;
  }
  std::string done() const { return text + "}"; }
};

double us(double s) { return s * 1e6; }

void write_stats(Fields& f, const BenchEntry& e) {
  f.num("iterations", static_cast<double>(e.stats.count));
  f.num("real_time", us(e.stats.median));
  f.num("cpu_time", us(e.stats.median));
  f.str("time_unit", "us");
  f.num("p25_time", us(e.stats.p25));
  f.num("p75_time", us(e.stats.p75));
  f.num("min_time", us(e.stats.min));
  f.num("max_time", us(e.stats.max));
  f.num("spread", e.stats.spread());
}

void write_rates(Fields& f, const BenchEntry& e) {
  const double s = e.stats.median;
  f.num("kc_flops", e.flops);
  f.num("kc_bytes", e.bytes);
  if (s > 0 && e.flops > 0) f.num("GFLOP/s", e.flops / s / 1e9);
  if (s > 0 && e.bytes > 0) f.num("GB/s", e.bytes / s / 1e9);
  f.opt("fraction_of_ceiling", e.fraction);
  f.opt("ratio_to_peer", e.ratio_to_peer);
  f.num("peak_bytes", static_cast<double>(e.peak_bytes()));
  f.num("held_bytes", static_cast<double>(e.held_bytes));
  f.num("workspace_bytes", static_cast<double>(e.workspace_bytes));
  f.num("device_peak_bytes", static_cast<double>(e.device_peak_bytes));
  f.num("rss_peak_bytes", static_cast<double>(e.rss_peak_bytes));
  if (e.activation_peak_bytes >= 0) f.num("activation_peak_bytes", e.activation_peak_bytes);
  if (e.recomputations >= 0) f.num("recomputed_layers", e.recomputations);
}

void write_kc(Fields& f, const BenchEntry& e) {
  for (auto [k, v] : {std::pair<const char*, const std::string*>{"kc_case", &e.case_name},
                      {"kc_file", &e.file},
                      {"kc_backend", &e.backend},
                      {"kc_op", &e.op},
                      {"kc_mode", &e.mode},
                      {"kc_device", &e.device},
                      {"kc_algorithm", &e.algorithm},
                      {"kc_ceiling", &e.ceiling},
                      {"kc_peer", &e.peer},
                      {"kc_recheck", &e.recheck},
                      {"kc_geometry", &e.geometry},
                      {"kc_family", &e.family},
                      {"kc_resolution", &e.resolution}})
    f.str(k, *v);
  f.str("kc_dtype", dtype_name(e.dtype));
  f.str("kc_compute", dtype_name(e.compute));
  f.num("kc_recheck_failed", e.recheck_failed ? 1 : 0);
  f.num("kc_fraction_over_one", e.fraction_over_one ? 1 : 0);
  f.num("kc_transform_saving", e.transform_saving);
  f.num("kc_transform_unbounded", e.transform_unbounded ? 1 : 0);
  f.num("kc_spatial_rank", static_cast<double>(e.spatial_rank));
  f.num("kc_activation_bytes", e.activation_bytes);
  f.num("kc_y_bytes", e.y_bytes);
  f.num("kc_cache_bytes", static_cast<double>(e.cache_bytes));
  f.num("kc_instances", static_cast<double>(e.instances));
}

}  // namespace

std::string entry_json(const BenchEntry& e) {
  Fields f;
  f.str("name", e.name());
  f.str("run_name", e.name());
  f.str("run_type", "iteration");
  f.num("repetitions", 1);
  f.num("repetition_index", 0);
  f.num("threads", 1);
  if (!e.error.empty()) {
    f.add("error_occurred", "true");
    f.str("error_message", e.error);
  }
  if (!e.skipped.empty()) f.str("kc_skipped", e.skipped);
  write_stats(f, e);
  write_rates(f, e);
  write_kc(f, e);
  return f.done();
}

std::string ceiling_json(const Ceiling& c) {
  Fields f;
  f.str("name", "ceiling/" + c.device + "/" + c.name);
  f.str("run_name", "ceiling/" + c.device + "/" + c.name);
  f.str("run_type", "iteration");
  f.num("iterations", 1);
  f.num("real_time", 0);
  f.num("cpu_time", 0);
  f.str("time_unit", "us");
  f.str("kc_ceiling_device", c.device);
  f.str("kc_ceiling_name", c.name);
  if (c.dtype) f.str("kc_dtype", dtype_name(*c.dtype));
  f.num(c.flops ? "GFLOP/s" : "GB/s", c.per_second / 1e9);
  f.str("kc_detail", c.detail);
  return f.done();
}

std::string ceiling_wire(const Ceiling& c) { return ceiling_json(c); }

}  // namespace kc::bench
