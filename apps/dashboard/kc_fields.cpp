// Optional fields stay at their defaults when absent (an older `kcheck bench` wrote fewer);
// a field present with the wrong type is an error, since it means the writer changed.
#include "kc_fields.h"

#include "json_fields.h"

namespace kc::bench {
namespace {

double counter(const YAML::Node& b, const char* key) { return number_value(b[key]).value_or(0.0); }

Status read_table(const YAML::Node& t, const std::string& where, RunTable& table) {
  if (!t.IsMap()) return invalid_argument(where + ": not an object");
  table.key = string_field(t, "key");
  table.title = string_field(t, "title");
  table.note = string_field(t, "note");
  if (const YAML::Node c = t["columns"]; c) {
    if (!c.IsSequence()) return invalid_argument(where + ".columns: not a list");
    for (const auto& v : c) table.columns.push_back(v.IsScalar() ? v.Scalar() : "");
  }
  const YAML::Node rows = t["rows"];
  if (rows && !rows.IsSequence()) return invalid_argument(where + ".rows: not a list");
  for (size_t i = 0; rows && i < rows.size(); ++i) {
    if (!rows[i].IsSequence()) return invalid_argument(where + ".rows[" + std::to_string(i) + "]: not a list");
    std::vector<std::string> row;
    for (const auto& v : rows[i]) row.push_back(v.IsScalar() ? v.Scalar() : "");
    table.rows.push_back(std::move(row));
  }
  return ok_status();
}

Status read_target(const YAML::Node& t, const std::string& where, RunTarget& target) {
  if (!t.IsMap()) return invalid_argument(where + ": not an object");
  target.key = string_field(t, "key");
  target.what = string_field(t, "what");
  target.goal = string_field(t, "goal");
  target.detail = string_field(t, "detail");
  if (target.what.empty()) target.what = target.key;
  target.value = number_value(t["value"]).value_or(0.0);
  const std::string met = string_field(t, "met");
  if (met != "true" && met != "false") return invalid_argument(where + ".met: missing or not true/false");
  target.met = met == "true";
  return ok_status();
}

}  // namespace

StatusOr<Sample> read_sample(const YAML::Node& b, double seconds_per_unit, const std::string& where) {
  Sample s;
  s.case_name = string_field(b, "kc_case");
  s.op = string_field(b, "kc_op");
  s.backend = string_field(b, "kc_backend");
  if (s.case_name.empty()) return invalid_argument(where + ".kc_case: missing");
  if (s.backend.empty()) return invalid_argument(where + ".kc_backend: missing");
  s.mode = string_field(b, "kc_mode");
  s.dtype = string_field(b, "kc_dtype");
  s.device = string_field(b, "kc_device");
  s.peer = string_field(b, "kc_peer");
  s.ceiling = string_field(b, "kc_ceiling");
  s.algorithm = string_field(b, "kc_algorithm");
  s.recheck = string_field(b, "kc_recheck");
  s.spread = counter(b, "spread");
  s.p25_seconds = counter(b, "p25_time") * seconds_per_unit;  // in the entry's time_unit (docs/bench.md)
  s.p75_seconds = counter(b, "p75_time") * seconds_per_unit;
  s.gflops = counter(b, "GFLOP/s");
  s.gbs = counter(b, "GB/s");
  s.fraction_of_ceiling = counter(b, "fraction_of_ceiling");
  s.ratio_to_peer = counter(b, "ratio_to_peer");
  s.peak_bytes = counter(b, "peak_bytes");
  s.rss_peak_bytes = counter(b, "rss_peak_bytes");
  return s;
}

Ceiling read_ceiling(const YAML::Node& b, const std::string& name) {
  Ceiling c;
  const std::string rest = name.substr(name.find('/') + 1);  // "<device>/<name>"
  c.device = string_field(b, "kc_ceiling_device");
  if (c.device.empty()) c.device = rest.substr(0, rest.find('/'));
  c.name = rest.find('/') == std::string::npos ? rest : rest.substr(rest.find('/') + 1);
  c.detail = string_field(b, "kc_detail");
  c.gflops = counter(b, "GFLOP/s");
  c.gbs = counter(b, "GB/s");
  return c;
}

Status read_run_fields(const YAML::Node& root, BenchRun& run) {
  if (const YAML::Node tables = root["kc_tables"]; tables) {
    if (!tables.IsSequence()) return invalid_argument(run.source + ": kc_tables: not a list");
    for (size_t i = 0; i < tables.size(); ++i) {
      RunTable t;
      KC_RETURN_IF_ERROR(read_table(tables[i], run.source + ": kc_tables[" + std::to_string(i) + "]", t));
      run.tables.push_back(std::move(t));
    }
  }
  if (const YAML::Node targets = root["kc_targets"]; targets) {
    if (!targets.IsSequence()) return invalid_argument(run.source + ": kc_targets: not a list");
    for (size_t i = 0; i < targets.size(); ++i) {
      RunTarget t;
      KC_RETURN_IF_ERROR(read_target(targets[i], run.source + ": kc_targets[" + std::to_string(i) + "]", t));
      run.targets.push_back(std::move(t));
    }
  }
  if (const YAML::Node f = root["kc_failures"]; f) {
    const auto n = number_value(f);
    if (!n || *n < 0) return invalid_argument(run.source + ": kc_failures: not a count");
    run.failures = static_cast<int>(*n);
  }
  return ok_status();
}

}  // namespace kc::bench
