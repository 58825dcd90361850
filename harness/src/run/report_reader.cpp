// read_report (report_reader.h): yaml-cpp reads the JSON; its exceptions end here.
#include "run/report_reader.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>

namespace kc {
namespace {

Disposition disposition_of(const std::string& name) {
  for (Disposition d : kAllDispositions) {
    if (disposition_name(d) == name) return d;
  }
  throw std::runtime_error("unknown disposition '" + name + "'");
}

// A number as json_number wrote it: finite, or "nan", "inf", "-inf".
double number(const YAML::Node& n) {
  const std::string s = n.Scalar();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  return n.as<double>();
}

CheckResult check_of(const YAML::Node& n) {
  CheckResult c;
  c.name = n["name"].as<std::string>();
  c.disposition = disposition_of(n["disposition"].as<std::string>());
  c.message = n["message"].as<std::string>();
  c.max_error_ratio = number(n["max_error_ratio"]);
  c.max_abs_error = number(n["max_abs_error"]);
  if (n["seconds"]) c.seconds = number(n["seconds"]);  // reports before it was written have none
  for (const YAML::Node& w : n["worst"]) {
    WorstPoint p{w["tensor"].as<std::string>(), w["index"].as<std::vector<int64_t>>(), number(w["candidate"]),
                 number(w["reference"]), number(w["bound"])};
    c.worst.push_back(std::move(p));
  }
  return c;
}

CaseResult result_of(const YAML::Node& n) {
  CaseResult r;
  r.case_name = n["case"].as<std::string>();
  r.source = n["source"].as<std::string>();
  r.backend = n["backend"].as<std::string>();
  r.disposition = disposition_of(n["disposition"].as<std::string>());
  r.message = n["message"].as<std::string>();
  r.seconds = number(n["seconds"]);
  r.reproducer = n["reproducer"].as<std::string>();
  for (const auto& kv : n["fields"]) {
    const std::string key = kv.first.as<std::string>();
    if (key != "file" && key != "line") r.fields.emplace_back(key, kv.second.as<std::string>());
  }
  for (const YAML::Node& c : n["checks"]) r.checks.push_back(check_of(c));
  return r;
}

}  // namespace

StatusOr<ReadReport> read_report(const std::string& path) {
  ReadReport out;
  out.path = path;
  try {
    const YAML::Node root = YAML::LoadFile(path);
    if (!root.IsMap() || !root["schema_version"]) return invalid_argument(path + ": not a kcheck report");
    if (root["schema_version"].as<int>() != kReportSchemaVersion) {
      return invalid_argument(path + ": schema_version " + root["schema_version"].Scalar() + ", this kcheck reads " +
                              std::to_string(kReportSchemaVersion));
    }
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      if (key == "command")
        out.info.command = kv.second.as<std::string>();
      else if (key == "started")
        out.info.started = kv.second.as<std::string>();
      else if (key == "seconds")
        out.info.seconds = number(kv.second);
      else if (kv.second.IsScalar() && key != "schema_version" && key != "tool")
        out.info.extra[key] = kv.second.Scalar();
    }
    for (const YAML::Node& b : root["backends"]) {
      out.info.backends.push_back({b["name"].as<std::string>(), b["reason"].as<std::string>(), b["ran"].as<bool>(),
                                   false, b["numerics"] ? b["numerics"].as<std::string>() : std::string()});
    }
    for (const YAML::Node& r : root["results"]) out.results.push_back(result_of(r));
  } catch (const YAML::BadFile&) {
    return invalid_argument(path + ": cannot be read");
  } catch (const std::exception& e) {
    return invalid_argument(path + ": not a kcheck report: " + e.what());
  }
  return out;
}

}  // namespace kc
