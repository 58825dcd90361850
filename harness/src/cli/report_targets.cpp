// Where kcheck run writes its reports: one file, or with "{backend}" in the --report path,
// one report per backend (its results and the run's invalid case files), each with its
// own failures/ folder beside it, so that a dashboard or a test reads one backend's
// results without the others'.
#include <algorithm>
#include <filesystem>

#include "cli.h"
#include "kc/report.h"

namespace kc::cli {

namespace {
constexpr std::string_view kBackendField = "{backend}";
}

std::string failures_folder(const std::string& report) {
  return (std::filesystem::path(report).parent_path() / "failures").string();
}

bool per_backend_report(const std::string& report) { return report.find(kBackendField) != std::string::npos; }

std::vector<ReportTarget> report_targets(const std::string& report, const std::vector<std::string>& backends) {
  if (report.empty()) return {};
  if (!per_backend_report(report)) return {{"", report}};
  std::vector<ReportTarget> out;
  for (const std::string& b : backends) {
    std::string path = report;
    for (size_t at = path.find(kBackendField); at != std::string::npos; at = path.find(kBackendField, at + b.size())) {
      path.replace(at, kBackendField.size(), b);
    }
    out.push_back({b, path});
  }
  return out;
}

std::string report_target_problem(const ReportTarget& t) {
  if (std::string bad = output_file_problem("--report", t.path); !bad.empty()) return bad;
  const std::string folder = failures_folder(t.path);
  return output_folder_problem("--report", "the failures folder next to the report", folder);
}

std::string write_report_targets(const std::vector<ReportTarget>& targets, std::vector<CaseResult>& results,
                                 const RunInfo& info, const std::vector<std::string>& plugins, bool& reproducers) {
  reproducers = true;
  for (const ReportTarget& t : targets) {
    const std::string failures = failures_folder(t.path);
    std::vector<size_t> mine;  // indices into results: this backend's, and the invalid files'
    for (size_t i = 0; i < results.size(); ++i) {
      if (t.backend.empty() || results[i].backend == t.backend || results[i].backend == kNoBackend) {
        mine.push_back(i);
      }
    }
    std::vector<CaseResult> part;
    for (size_t i : mine) part.push_back(results[i]);
    name_reproducers(failures, part);
    for (size_t k = 0; k < mine.size(); ++k) results[mine[k]].fields = part[k].fields;
    if (std::string why = write_text_file(t.path, report_json(part, info)); !why.empty()) {
      return "cannot write " + t.path + ": " + why;
    }
    reproducers = write_failures(failures, part, plugins) && reproducers;
  }
  return {};
}

}  // namespace kc::cli
