// kcheck bench's command line: paths, backends, plugins, output and the timing budget.
#include "bench_options.h"

#include <sstream>

namespace kc::cli {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The option at args[i] that takes a value; "" when it is not one of those.
std::string value_option(const Args& args, size_t& i, BenchCliOptions& o, std::string& err) {
  const std::string& a = args[i];
  static const char* kValued[] = {"--backend",  "--plugin",   "--python",   "--out",   "--min-time",
                                  "--min-reps", "--max-reps", "--max-time", "--cache", "--timeout"};
  bool valued = false;
  for (const char* v : kValued) valued = valued || a == v;
  if (!valued) return {};
  if (i + 1 >= args.size()) {
    err = a + " needs a value";
    return a;
  }
  const std::string& v = args[++i];
  if (a == "--backend") {
    for (const std::string& b : split_list(v)) o.backends.push_back(b);
  } else if (a == "--plugin") {
    o.plugins.push_back(v);
  } else if (a == "--python") {
    o.python.push_back(v);
  } else if (a == "--out") {
    o.out = v;
  } else if (a == "--min-time") {  // 0: the count of runs alone decides
    o.budget.min_seconds = 0.0;
    if (v != "0") err = parse_seconds_option(a, v, o.budget.min_seconds);
  } else if (a == "--min-reps") {
    err = parse_count_option(a, v, o.budget.min_reps);
  } else if (a == "--max-reps") {
    err = parse_count_option(a, v, o.budget.max_reps);
    if (err.empty() && o.budget.max_reps < 1) err = "--max-reps: at least 1";
  } else if (a == "--max-time") {
    err = parse_seconds_option(a, v, o.budget.max_seconds);
  } else if (a == "--timeout") {
    err = parse_seconds_option(a, v, o.timeout);
  } else if (a == "--cache") {
    o.warm = v == "warm" || v == "both";
    o.cold = v == "cold" || v == "both";
    if (!o.warm && !o.cold) err = "--cache: expected warm, cold or both, got '" + v + "'";
  }
  return a;
}

}  // namespace

std::string parse_bench_options(const Args& args, BenchCliOptions& o) {
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string err;
    const std::string flag = value_option(args, i, o, err);
    if (!err.empty()) return err;
    if (!flag.empty()) {
      if (flag != "--backend" && flag != "--plugin" && flag != "--python") {
        if (std::string twice = given_twice(seen, flag); !twice.empty()) return twice;
      }
      continue;
    }
    if (args[i] == "--in-process") {
      o.in_process = true;
    } else if (args[i] == "--no-ceilings") {
      o.ceilings = false;
    } else if (args[i].rfind("--", 0) == 0) {
      return "bench: unknown option '" + args[i] + "'";
    } else {
      o.paths.push_back(args[i]);
    }
  }
  if (o.paths.empty()) return "bench: no case file or folder given";
  if (o.backends.empty()) o.backends.push_back("reference");
  if (o.budget.max_reps < o.budget.min_reps) return "--max-reps is less than --min-reps";
  return {};
}

}  // namespace kc::cli
