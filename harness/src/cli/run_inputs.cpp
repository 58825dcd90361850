// kcheck run's inputs (run_inputs.h): the walks of every path joined, a file reached by
// several paths or links taken once (by its path with links resolved), and the cases
// loaded with their NAME.expect.
#include "run_inputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "cli.h"

namespace kc::cli {
namespace {

// A file that cannot carry `expect:` (not YAML, empty, not a map) may have a sibling
// NAME.expect holding the expected error text on its first line. A blank first line
// would match almost any error: it is no expectation, and the file stays INVALID. Only
// a regular file is opened: a FIFO named so would block the run.
void apply_sibling_expect(const std::string& file, std::vector<LoadedCase>& loaded) {
  std::filesystem::path p(file);
  p.replace_extension(".expect");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) return;
  std::ifstream f(p);
  std::string text;
  if (!f || !std::getline(f, text) || text.find_first_not_of(" \t\r") == std::string::npos) return;
  for (LoadedCase& lc : loaded) {
    if (lc.expect.pass) lc.expect = Expectation{false, text};
  }
}

// A failure reproducer's file name, as write_failures gives it: digits, '-', .yaml.
bool is_reproducer_name(const std::string& path) {
  static const std::regex kName("[0-9]+-.+\\.yaml");
  return std::regex_match(std::filesystem::path(path).filename().string(), kName);
}

// A file's path with links resolved, or as given when that fails.
std::string key(const std::string& f) {
  std::error_code ec;
  const std::string canonical = std::filesystem::weakly_canonical(f, ec).string();
  return ec ? f : canonical;
}

}  // namespace

// The report's failures folder holds this command's own reproducers (NNN-....yaml):
// a scan of a folder that holds it (a report written inside a scanned folder) leaves
// them out, so that the same command reads the same cases when it runs again. Other
// files there are read, and output_clash refuses the run, whose reproducers could
// overwrite them; so it does when the failures folder is named as a path itself.
Found find_all(const std::vector<std::string>& paths, const std::string& failures) {
  Found found;
  std::set<std::string> seen, seen_unlisted;
  std::map<std::string, std::string_view> over;  // a file passed over by some scan: its reason
  for (const std::string& p : paths) {
    CaseFiles listed = find_case_files(p);
    const bool skip_failures = !failures.empty() && inside_folder(failures, p);
    for (std::string& f : listed.files) {
      if (skip_failures && inside_folder(f, failures) && is_reproducer_name(f)) {
        over.emplace(key(f), kOwnReproducer.key);
      } else if (seen.insert(key(f)).second) {
        found.files.push_back(std::move(f));
      }
    }
    for (LoadedCase& problem : listed.problems) {
      if (seen_unlisted.insert(key(problem.file)).second) found.unlisted.push_back(std::move(problem));
    }
    for (const PassedOverFile& f : listed.passed_over) over.emplace(key(f.path), f.reason);
  }
  // A file one scan passes over and another reads (a marked folder named itself) is read.
  for (const auto& [file, why] : over) {
    if (seen.count(file) == 0) ++found.passed_over[std::string(why)];
  }
  std::stable_partition(found.files.begin(), found.files.end(),
                        [](const std::string& f) { return f.find("/regressions/") != std::string::npos; });
  return found;
}

std::vector<LoadedCase> load_all(Found found) {
  std::vector<LoadedCase> cases;
  for (const std::string& f : found.files) {
    std::vector<LoadedCase> loaded = load_case_file(f);
    apply_sibling_expect(f, loaded);
    for (LoadedCase& c : loaded) cases.push_back(std::move(c));
  }
  for (LoadedCase& problem : found.unlisted) cases.push_back(std::move(problem));
  return cases;
}

}  // namespace kc::cli
