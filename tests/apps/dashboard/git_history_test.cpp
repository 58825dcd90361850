// --git-dir: every committed version of every bench JSON under a folder of a scratch
// repository, oldest first per file; other JSON there (a kcheck run report) is skipped,
// and a folder with no bench JSON in its history is NotFound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "git_history.h"
#include "synthetic_run.h"

namespace kc::bench {
namespace {

namespace fs = std::filesystem;

TEST(GitReports, EveryVersionOfEveryBenchJsonUnderTheFolder) {
  const fs::path repo = fs::temp_directory_path() / ("kc_git_reports_" + std::to_string(::getpid()));
  fs::remove_all(repo);
  fs::create_directories(repo / "reports" / "gpu");
  fs::create_directories(repo / "other");
  const std::string git = "git -C " + repo.string() + " -c user.name=t -c user.email=t@t -c commit.gpgsign=false ";
  ASSERT_EQ(std::system((git + "init -q . >/dev/null 2>&1").c_str()), 0) << "git is needed";
  auto commit = [&] { return std::system((git + "add -A && " + git + "commit -qm run >/dev/null").c_str()); };
  std::ofstream(repo / "reports" / "gpu" / "corpus-report.json") << "{\"summary\": {}, \"results\": []}";
  std::ofstream(repo / "other" / "bench.json") << synthetic_json({.machine = "elsewhere"});
  std::ofstream(repo / "reports" / "bench.json") << synthetic_json({.date = "2026-11-01T00:00:00+00:00"});
  ASSERT_EQ(commit(), 0);
  std::ofstream(repo / "reports" / "bench.json") << synthetic_json({.date = "2026-11-02T00:00:00+00:00"});
  std::ofstream(repo / "reports" / "gpu" / "bench.json") << synthetic_json({.machine = "gpu-box"});
  ASSERT_EQ(commit(), 0);
  auto runs = read_git_reports((repo / "reports").string());
  auto none = read_git_reports((repo / "reports" / "gpu" / "missing").string());
  fs::remove_all(repo);
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  ASSERT_EQ(runs->size(), 3u);  // two versions of reports/bench.json, one of reports/gpu/bench.json
  EXPECT_EQ((*runs)[0].date, "2026-11-01T00:00:00+00:00");
  EXPECT_EQ((*runs)[1].date, "2026-11-02T00:00:00+00:00");
  EXPECT_EQ((*runs)[2].machine, "gpu-box");
  EXPECT_NE((*runs)[2].source.find(":" + (repo / "reports").string() + "/gpu/bench.json"), std::string::npos)
      << (*runs)[2].source;
  EXPECT_EQ((*runs)[0].recorded.size(), 40u);
  EXPECT_FALSE(none.ok());
}

}  // namespace
}  // namespace kc::bench
