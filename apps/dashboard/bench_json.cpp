// Both formats in one pass over "benchmarks". kcheck-bench: per function name, the median
// aggregate when repetitions ran (its stddev gives the spread). kcheck bench: one Sample
// per timed entry, ceilings and errors kept apart.
#include "bench_json.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "json_fields.h"
#include "kc_fields.h"

namespace kc::bench {
namespace {

// Fields of a benchmark record that are not user counters.
bool is_record_field(const std::string& key) {
  static const std::set<std::string> f = {"name",
                                          "family_index",
                                          "per_family_instance_index",
                                          "run_name",
                                          "run_type",
                                          "repetitions",
                                          "repetition_index",
                                          "threads",
                                          "aggregate_name",
                                          "aggregate_unit",
                                          "iterations",
                                          "real_time",
                                          "cpu_time",
                                          "time_unit",
                                          "label",
                                          "error_occurred",
                                          "error_message",
                                          "big_o",
                                          "rms"};
  return f.count(key) > 0 || key.rfind("kc_", 0) == 0;
}

bool is_kcheck_bench(const YAML::Node& root) {
  if (root["kc_targets"] || root["kc_tables"] || root["kc_failures"]) return true;
  for (const auto& b : root["benchmarks"]) {
    if (b.IsMap() && b["kc_case"]) return true;
  }
  return false;
}

void read_context(const YAML::Node& ctx, BenchRun& run) {
  if (!ctx || !ctx.IsMap()) return;
  run.date = string_field(ctx, "date");
  run.host = string_field(ctx, "host_name");
  run.commit = string_field(ctx, "kc_commit");
  run.cpu = string_field(ctx, "kc_cpu");
  run.gpu = string_field(ctx, "kc_gpu");
  run.libraries = string_field(ctx, "kc_libraries");
  run.machine = string_field(ctx, "kc_machine");
  if (run.machine.empty()) {  // the older app records no key: the host and its CPUs stand for one
    run.machine = (run.host.empty() ? "unknown host" : run.host) + ", " + string_field(ctx, "num_cpus") + " cpus at " +
                  string_field(ctx, "mhz_per_cpu") + " MHz";
  }
}

// One kcheck-bench record into run.entries (the median wins over single iterations).
Status read_function_entry(const YAML::Node& b, const std::string& where, BenchRun& run,
                           std::set<std::string>& from_median, std::map<std::string, double>& stddev) {
  const std::string type = string_field(b, "run_type");
  const std::string aggregate = string_field(b, "aggregate_name");
  std::string name = string_field(b, "run_name");
  if (name.empty()) name = string_field(b, "name");
  if (name.empty()) return invalid_argument(where + ".name: missing");
  name = name.substr(0, name.find('/'));  // the function name, as the bench's own reporter keys it
  const bool median = type == "aggregate" && aggregate == "median";
  if (type == "aggregate" && !median && aggregate != "stddev") return ok_status();
  if (!median && type != "aggregate" && from_median.count(name)) return ok_status();
  const auto t = number_value(b["real_time"]);
  if (!t) return invalid_argument(where + ".real_time: missing or not a number");
  const auto unit = unit_seconds(string_field(b, "time_unit"));
  if (!unit)
    return invalid_argument(where + ".time_unit: '" + string_field(b, "time_unit") + "' is not ns, us, ms or s");
  if (aggregate == "stddev") {
    stddev[name] = *t * *unit;
    return ok_status();
  }
  Entry e;
  e.seconds = *t * *unit;
  for (const auto& kv : b) {
    const std::string key = kv.first.Scalar();
    if (is_record_field(key)) continue;
    if (const auto v = number_value(kv.second)) e.counters[key] = *v;
  }
  if (median) from_median.insert(name);
  run.entries[name] = std::move(e);
  return ok_status();
}

// kcheck-bench's entries as Samples, and its targets (targets.h) judged on them.
void finish_function_entries(BenchRun& run, const std::map<std::string, double>& stddev) {
  for (const auto& [name, e] : run.entries) {
    Sample s;
    s.case_name = name;
    s.backend = "kcheck-bench";
    s.seconds = e.seconds;
    if (auto it = stddev.find(name); it != stddev.end() && e.seconds > 0) s.spread = it->second / e.seconds;
    if (auto g = e.counters.find("GFLOP/s"); g != e.counters.end()) s.gflops = g->second;
    run.samples.push_back(std::move(s));
  }
  for (const Target& t : targets()) {
    const auto m = evaluate(t, run.entries);
    if (!m) continue;
    run.targets.push_back({std::string(t.key), std::string(t.what), m->goal, m->detail, m->value, m->met});
  }
}

// One kcheck bench record: a ceiling or a timed entry.
Status read_kc_entry(const YAML::Node& b, const std::string& where, BenchRun& run) {
  const std::string name = string_field(b, "name");
  if (name.rfind("ceiling/", 0) == 0) {
    run.ceilings.push_back(read_ceiling(b, name));
    return ok_status();
  }
  const auto t = number_value(b["real_time"]);
  if (!t) return invalid_argument(where + ".real_time: missing or not a number");
  const auto unit = unit_seconds(string_field(b, "time_unit"));
  if (!unit)
    return invalid_argument(where + ".time_unit: '" + string_field(b, "time_unit") + "' is not ns, us, ms or s");
  auto s = read_sample(b, *unit, where);
  if (!s.ok()) return s.status();
  s->seconds = *t * *unit;
  run.samples.push_back(std::move(*s));
  return ok_status();
}

}  // namespace

bool is_bench_json(std::string_view text) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    return root.IsMap() && root["benchmarks"] && root["benchmarks"].IsSequence();
  } catch (const YAML::Exception&) {
    return false;
  }
}

StatusOr<BenchRun> parse_bench_json(std::string_view text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return invalid_argument(source + ": not Google Benchmark JSON: " + e.msg);
  }
  if (!root.IsMap()) return invalid_argument(source + ": not Google Benchmark JSON: the top level is not an object");
  const YAML::Node benchmarks = root["benchmarks"];
  if (!benchmarks || !benchmarks.IsSequence()) {
    return invalid_argument(source + ": benchmarks: missing or not a list (is this bench JSON?)");
  }
  BenchRun run;
  run.source = source;
  run.format = is_kcheck_bench(root) ? RunFormat::kKcheckBench : RunFormat::kGoogleBenchmark;
  read_context(root["context"], run);
  std::set<std::string> from_median;
  std::map<std::string, double> stddev;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const YAML::Node b = benchmarks[i];
    const std::string where = source + ": benchmarks[" + std::to_string(i) + "]";
    if (!b.IsMap()) return invalid_argument(where + ": not an object");
    if (string_field(b, "error_occurred") == "true") {
      run.errors.push_back({string_field(b, "name"), string_field(b, "error_message")});
      continue;
    }
    KC_RETURN_IF_ERROR(run.format == RunFormat::kKcheckBench ? read_kc_entry(b, where, run)
                                                             : read_function_entry(b, where, run, from_median, stddev));
  }
  if (run.format == RunFormat::kKcheckBench) {
    KC_RETURN_IF_ERROR(read_run_fields(root, run));
  } else {
    finish_function_entries(run, stddev);
  }
  if (run.samples.empty() && run.errors.empty() && run.ceilings.empty()) {
    return invalid_argument(source + ": benchmarks: no entry without an error");
  }
  return run;
}

StatusOr<BenchRun> read_bench_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_bench_json(text.str(), path);
}

}  // namespace kc::bench
