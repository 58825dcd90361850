// kcheck merge R1.json R2.json ... -o R.json [--junit R.xml]: the reports of the shards of
// one run as one report. Refused (exit 2, naming the files): reports of other commits or
// case sets, a shard given twice, shards of different counts.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "cli.h"
#include "kc/report.h"
#include "run/report_reader.h"

namespace kc::cli {
namespace {

constexpr const char* kMergeUsage =
    "usage: kcheck merge R1.json R2.json ... -o R.json [--junit R.xml]\n"
    "  joins the reports of the shards of one run (kcheck run|fuzz --shard i/n or auto): the same commit\n"
    "  and case set, each shard once. Prints the summary; exit as kcheck run would for all the results.\n";

// The value of `key` in every report, or why they differ.
std::string same(const std::vector<ReadReport>& reports, const std::string& key) {
  for (const ReadReport& r : reports) {
    const auto a = reports.front().info.extra.find(key), b = r.info.extra.find(key);
    const std::string va = a == reports.front().info.extra.end() ? "(none)" : a->second;
    const std::string vb = b == r.info.extra.end() ? "(none)" : b->second;
    if (va != vb) {
      return "merge: " + reports.front().path + " has " + key + " " + va + ", " + r.path + " has " + vb +
             ": not shards of one run";
    }
  }
  return {};
}

// Every shard once, all of one count: "i/n" of each report. Notes the missing ones.
std::string check_shards(const std::vector<ReadReport>& reports, std::string& note) {
  std::map<int64_t, std::string> seen;
  int64_t count = -1;
  for (const ReadReport& r : reports) {
    const auto it = r.info.extra.find("shard");
    int64_t i = 0, n = 1;
    if (it == r.info.extra.end() || !parse_shard_option(it->second, i, n).empty()) {
      return "merge: " + r.path + " names no shard i/n";
    }
    if (count >= 0 && n != count)
      return "merge: " + r.path + " is a shard of " + std::to_string(n) + ", not " + std::to_string(count);
    count = n;
    if (!seen.emplace(i, r.path).second) {
      return "merge: shard " + it->second + " is both " + seen[i] + " and " + r.path;
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    if (!seen.count(i)) note += (note.empty() ? "shards missing:" : ",") + std::string(" ") + std::to_string(i);
  }
  return {};
}

RunInfo merged_info(const std::vector<ReadReport>& reports, const std::string& command) {
  RunInfo info = reports.front().info;
  info.command = command;
  for (const ReadReport& r : reports) {
    info.started = std::min(info.started, r.info.started);
    info.seconds = std::max(info.seconds, r.info.seconds);  // the shards ran side by side
    for (const BackendStatus& b : r.info.backends) {
      auto it = std::find_if(info.backends.begin(), info.backends.end(),
                             [&](const BackendStatus& x) { return x.name == b.name; });
      if (it == info.backends.end()) {
        info.backends.push_back(b);
      } else {
        it->ran = it->ran || b.ran;
        if (b.unavailable.empty()) it->unavailable.clear();  // available on some machine
      }
    }
  }
  info.extra["shard"] = "merged " + std::to_string(reports.size());
  return info;
}

}  // namespace

int merge_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(kMergeUsage, stdout);
    return 0;
  }
  std::vector<std::string> inputs;
  std::string out, junit;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-o" || args[i] == "--junit") && i + 1 < args.size()) {
      std::string& target = args[i] == "-o" ? out : junit;
      target = args[++i];
    } else if (args[i].rfind("-", 0) == 0) {
      return usage_error("merge: unknown option or missing value: '" + args[i] + "'");
    } else {
      inputs.push_back(args[i]);
    }
  }
  if (inputs.empty() || out.empty()) return usage_error("merge: give the reports and -o R.json");
  for (const std::string& o : {out, junit}) {
    if (!o.empty()) {
      if (std::string bad = output_file_problem(o == out ? "-o" : "--junit", o); !bad.empty()) return usage_error(bad);
    }
  }
  std::vector<ReadReport> reports;
  for (const std::string& path : inputs) {
    StatusOr<ReadReport> r = read_report(path);
    if (!r.ok()) return usage_error(r.status().message());
    reports.push_back(std::move(*r));
  }
  std::string note;
  for (const char* key : {"kc_commit", "case_set", "skipped_checks"}) {
    if (std::string bad = same(reports, key); !bad.empty()) return usage_error(bad);
  }
  if (std::string bad = check_shards(reports, note); !bad.empty()) return usage_error(bad);
  std::string command = "kcheck merge";
  for (const std::string& a : args) command += " " + a;
  const RunInfo info = merged_info(reports, command);
  std::vector<CaseResult> results;
  for (const ReadReport& r : reports) results.insert(results.end(), r.results.begin(), r.results.end());
  std::fputs(terminal_safe(summary_text(results, info)).c_str(), stdout);
  if (!note.empty()) std::printf("%s\n", note.c_str());
  if (std::string why = write_text_file(out, report_json(results, info)); !why.empty()) {
    return usage_error("cannot write " + out + ": " + why);
  }
  if (!junit.empty()) {
    if (std::string why = write_text_file(junit, junit_xml(results, info)); !why.empty()) {
      return usage_error("cannot write " + junit + ": " + why);
    }
  }
  std::printf("report: %s\n", terminal_safe(out).c_str());
  return exit_code(results);
}

}  // namespace kc::cli
