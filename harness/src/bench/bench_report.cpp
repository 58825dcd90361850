#include "bench/bench_report.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include "bench/ceilings.h"
#include "bench/entry_json.h"
#include "run/json_writer.h"

namespace kc::bench {
namespace {

std::string cpuinfo_field(const std::string& key) {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(key, 0) == 0 && line.find(':') != std::string::npos) return line.substr(line.find(':') + 2);
  }
  return {};
}

std::string iso_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", std::gmtime(&t));
  return buf;
}

std::string context_json(const BenchRunInfo& info) {
  std::string out = "{";
  for (const auto& [k, v] : info.context) out += json_string(k) + ": " + json_string(v) + ", ";
  out += "\"num_cpus\": " + std::to_string(info.num_cpus) + ", \"mhz_per_cpu\": " + json_number(info.mhz_per_cpu);
  out += ", \"caches\": [{\"type\": \"Unified\", \"level\": 3, \"size\": " + std::to_string(info.cache_bytes) +
         ", \"num_sharing\": " + std::to_string(info.num_cpus) + "}]";
  out += ", \"library_build_type\": \"release\", \"kc_backends\": {";
  for (size_t i = 0; i < info.backends.size(); ++i)
    out += (i ? ", " : "") + json_string(info.backends[i].first) + ": " +
           json_string(info.backends[i].second.empty() ? "available" : "unavailable: " + info.backends[i].second);
  return out + "}}";
}

std::string table_json(const Table& t) {
  auto list = [](const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + json_string(v[i]);
    return s + "]";
  };
  std::string rows = "[";
  for (size_t i = 0; i < t.rows.size(); ++i) rows += (i ? ",\n      " : "") + list(t.rows[i]);
  return "{\"key\": " + json_string(t.key) + ", \"title\": " + json_string(t.title) +
         ", \"note\": " + json_string(t.note) + ", \"columns\": " + list(t.columns) + ", \"rows\": " + rows + "]}";
}

std::string target_json(const TargetResult& t) {
  return "{\"key\": " + json_string(t.key) + ", \"what\": " + json_string(t.what) +
         ", \"value\": " + json_number(t.value) + ", \"goal\": " + json_string(t.goal) +
         ", \"met\": " + (t.met ? "true" : "false") + ", \"detail\": " + json_string(t.detail) + "}";
}

}  // namespace

int64_t BenchResults::failures() const {
  // An op that failed to prepare or run, or a worker that died, is a failure as in
  // `kcheck run`; a case a backend does not run is skipped, not failed.
  int64_t n = 0;
  for (const BenchEntry& e : entries) n += e.recheck_failed || e.fraction_over_one || !e.error.empty();
  return n;
}

BenchRunInfo host_run_info() {
  BenchRunInfo info;
  info.num_cpus = std::thread::hardware_concurrency();
  const std::string mhz = cpuinfo_field("cpu MHz");
  info.mhz_per_cpu = mhz.empty() ? 0.0 : std::atof(mhz.c_str());
  info.cache_bytes = host_cache_bytes();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  info.context["date"] = iso_now();
  info.context["host_name"] = host;
  info.context["executable"] = "kcheck bench";
  info.context["kc_cpu"] = cpuinfo_field("model name");
  return info;
}

std::string bench_report_json(const BenchResults& r, const BenchRunInfo& info) {
  std::string out = "{\n  \"context\": " + context_json(info) + ",\n  \"benchmarks\": [\n";
  bool first = true;
  for (const Ceiling& c : r.ceilings) out += std::string(first ? "" : ",\n") + "    " + ceiling_json(c), first = false;
  std::string skipped;
  for (const BenchEntry& e : r.entries) {
    if (!e.skipped.empty()) {  // not timed, not failed: listed apart so no chart or banner takes them
      skipped += std::string(skipped.empty() ? "" : ",\n") + "    {\"name\": " + json_string(e.name()) +
                 ", \"reason\": " + json_string(e.skipped) + "}";
      continue;
    }
    out += std::string(first ? "" : ",\n") + "    " + entry_json(e), first = false;
  }
  out += "\n  ],\n  \"kc_skipped\": [\n" + skipped + "\n  ],\n  \"kc_tables\": [\n";
  for (size_t i = 0; i < r.tables.size(); ++i) out += (i ? ",\n    " : "    ") + table_json(r.tables[i]);
  out += "\n  ],\n  \"kc_targets\": [\n";
  for (size_t i = 0; i < r.targets.size(); ++i) out += (i ? ",\n    " : "    ") + target_json(r.targets[i]);
  out += "\n  ],\n  \"kc_failures\": " + std::to_string(r.failures()) + "\n}\n";
  return out;
}

}  // namespace kc::bench
