// Google Benchmark JSON through yaml-cpp (JSON is YAML's flow style); numbers are read
// with strtod, which also takes the NaN and inf that the library writes.
#include "bench_json.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

namespace kc::bench {
namespace {

std::optional<double> number(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return std::nullopt;
  const std::string s = n.Scalar();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
  return v;
}

std::string scalar(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  return v && v.IsScalar() ? v.Scalar() : std::string();
}

// Seconds per unit of Google Benchmark's time_unit.
std::optional<double> unit_seconds(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  return std::nullopt;
}

// Fields of a benchmark record that are not user counters.
const std::set<std::string>& record_fields() {
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
  return f;
}

}  // namespace

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
    return invalid_argument(source +
                            ": benchmarks: missing or not a list (is this kcheck-bench --benchmark_out JSON?)");
  }
  BenchRun run;
  run.source = source;
  if (const YAML::Node ctx = root["context"]; ctx && ctx.IsMap()) {
    run.date = scalar(ctx, "date");
    run.host = scalar(ctx, "host_name");
    run.commit = scalar(ctx, "kc_commit");
  }
  std::set<std::string> from_median;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const YAML::Node b = benchmarks[i];
    const std::string where = source + ": benchmarks[" + std::to_string(i) + "]";
    if (!b.IsMap()) return invalid_argument(where + ": not an object");
    if (scalar(b, "error_occurred") == "true") continue;
    const std::string type = scalar(b, "run_type");
    const bool median = type == "aggregate" && scalar(b, "aggregate_name") == "median";
    if (type == "aggregate" && !median) continue;
    std::string name = scalar(b, "run_name");
    if (name.empty()) name = scalar(b, "name");
    if (name.empty()) return invalid_argument(where + ".name: missing");
    name = name.substr(0, name.find('/'));             // the function name, as the bench's own reporter keys it
    if (!median && from_median.count(name)) continue;  // the median of repetitions wins
    const auto t = number(b["real_time"]);
    if (!t) return invalid_argument(where + ".real_time: missing or not a number");
    const auto unit = unit_seconds(scalar(b, "time_unit"));
    if (!unit) return invalid_argument(where + ".time_unit: '" + scalar(b, "time_unit") + "' is not ns, us, ms or s");
    Entry e;
    e.seconds = *t * *unit;
    for (const auto& kv : b) {
      const std::string key = kv.first.Scalar();
      if (record_fields().count(key)) continue;
      if (const auto v = number(kv.second)) e.counters[key] = *v;
    }
    if (median) from_median.insert(name);
    run.entries[name] = std::move(e);
  }
  if (run.entries.empty()) return invalid_argument(source + ": benchmarks: no entry without an error");
  return run;
}

StatusOr<BenchRun> read_bench_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_bench_json(text.str(), path);
}

namespace {

// stdout of a shell command, and whether it exited 0.
std::pair<std::string, bool> capture(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return {out, false};
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  return {out, pclose(p) == 0};
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

StatusOr<std::vector<BenchRun>> read_git_history(const std::string& path) {
  const std::string rel = path.rfind("./", 0) == 0 || path.rfind('/', 0) == 0 ? path : "./" + path;
  auto [log, ok] = capture("git log --reverse --format=%H -- " + shell_quote(path));
  if (!ok) return not_found(path + ": git log failed (not inside a git checkout?)");
  std::vector<BenchRun> runs;
  std::istringstream commits(log);
  for (std::string commit; std::getline(commits, commit);) {
    if (commit.empty()) continue;
    auto [text, shown] = capture("git show " + shell_quote(commit + ":" + rel));
    if (!shown) continue;  // the commit deleted the file
    auto run = parse_bench_json(text, commit.substr(0, 12) + ":" + path);
    if (!run.ok()) return run.status();
    run->recorded = commit;
    runs.push_back(std::move(*run));
  }
  if (runs.empty()) return not_found(path + ": no committed version in git history");
  return runs;
}

}  // namespace kc::bench
