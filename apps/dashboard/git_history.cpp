// Through the git command line (popen), so that no git library is needed: `git log` lists
// the commits that changed a file, `git show <commit>:./<path>` reads each version.
#include "git_history.h"

#include <array>
#include <cstdio>
#include <set>
#include <sstream>

#include "bench_json.h"

namespace kc::bench {
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

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// The versions of `rel` (relative to `dir`) that are bench JSON; `label` names the file.
StatusOr<std::vector<BenchRun>> versions(const std::string& dir, const std::string& rel, const std::string& label,
                                         bool skip_other_json) {
  const std::string git = "git -C " + shell_quote(dir) + " ";
  auto [log, ok] = capture(git + "log --reverse --format=%H -- " + shell_quote(rel));
  if (!ok) return not_found(label + ": git log failed (not inside a git checkout?)");
  std::vector<BenchRun> runs;
  for (const std::string& commit : lines(log)) {
    auto [text, shown] = capture(git + "show " + shell_quote(commit + ":./" + rel));
    if (!shown) continue;  // the commit deleted the file
    if (skip_other_json && !is_bench_json(text)) continue;
    auto run = parse_bench_json(text, commit.substr(0, 12) + ":" + label);
    if (!run.ok()) return run.status();
    run->recorded = commit;
    runs.push_back(std::move(*run));
  }
  return runs;
}

}  // namespace

StatusOr<std::vector<BenchRun>> read_git_history(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  auto runs = versions(dir, name, path, false);
  if (runs.ok() && runs->empty()) return not_found(path + ": no committed version in git history");
  return runs;
}

StatusOr<std::vector<BenchRun>> read_git_reports(const std::string& dir) {
  // Every path under dir that any commit added or changed, relative to dir.
  auto [names, ok] = capture("git -C " + shell_quote(dir) + " log --format= --name-only --relative -- .");
  if (!ok) return not_found(dir + ": git log failed (not inside a git checkout?)");
  std::set<std::string> json;
  for (const std::string& n : lines(names)) {
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) json.insert(n);
  }
  std::vector<BenchRun> runs;
  const std::string prefix = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  for (const std::string& rel : json) {
    auto file_runs = versions(dir, rel, prefix + rel, true);
    if (!file_runs.ok()) return file_runs.status();
    for (auto& r : *file_runs) runs.push_back(std::move(r));
  }
  if (runs.empty()) return not_found(dir + ": no committed bench JSON under it in git history");
  return runs;
}

}  // namespace kc::bench
