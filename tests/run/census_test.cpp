// What a run checked per backend: every backend considered in the summary, the JSON and
// the JUnit properties, and a named or plugin backend that checked nothing called out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kc/report.h"

namespace kc {
namespace {

CaseResult result(const std::string& backend, Disposition d, const std::string& message = "") {
  CaseResult r;
  r.case_name = "c";
  r.source = "f.yaml:1";
  r.backend = backend;
  r.disposition = d;
  r.message = message;
  return r;
}

RunInfo info_with(std::vector<BackendStatus> backends) {
  RunInfo info;
  info.backends = std::move(backends);
  return info;
}

TEST(Census, EveryBackendConsideredIsListedWithItsState) {
  const std::vector<CaseResult> rs = {result("reference", Disposition::kPassed),
                                      result("reference", Disposition::kSkipped, "f64 only")};
  const RunInfo info = info_with({{"reference", "", true, false}, {"cuda", "no NVIDIA driver", false, false}});
  const std::string text = backends_text(rs, info);
  EXPECT_NE(text.find("reference    available, 2 cases: 1 passed, 1 skipped, "), std::string::npos) << text;
  EXPECT_NE(text.find("cuda         unavailable: no NVIDIA driver\n"), std::string::npos) << text;
  const std::string json = report_json(rs, info);
  EXPECT_NE(json.find("{\"name\": \"cuda\", \"available\": false, \"reason\": \"no NVIDIA driver\""), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"top_skip_reasons\": \"f64 only (1)\""), std::string::npos) << json;
  const std::string xml = junit_xml(rs, info);
  EXPECT_NE(xml.find("<property name=\"backend.cuda\" value=\"unavailable: no NVIDIA driver\"/>"), std::string::npos)
      << xml;
}

// A plugin's dozens of backends that were not named with --backend share one line that
// still names each; up to three keep a line each.
TEST(Census, ManyBackendsNotRunShareOneLine) {
  const std::vector<CaseResult> rs = {result("trap.none", Disposition::kPassed)};
  std::vector<BackendStatus> backends = {{"trap.none", "", true, true}, {"cuda", "no NVIDIA driver", false, false}};
  for (const char* name : {"reference", "trap.a", "trap.b", "trap.c"}) backends.push_back({name, "", false, false});
  const std::string text = backends_text(rs, info_with(backends));
  EXPECT_NE(text.find("trap.none    available, 1 cases: 1 passed"), std::string::npos) << text;
  EXPECT_NE(text.find("cuda         unavailable: no NVIDIA driver\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  4 more available, not run (not named with --backend): reference, trap.a, trap.b, trap.c\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("trap.a       available"), std::string::npos) << text;
  backends.resize(5);  // three not run: each on its own line
  const std::string few = backends_text(rs, info_with(backends));
  EXPECT_NE(few.find("trap.b       available, not run (not named with --backend)\n"), std::string::npos) << few;
}

TEST(Census, ABackendThatMustCheckAndCheckedNothingIsNamed) {
  const std::vector<CaseResult> rs = {result("my.conv", Disposition::kSkipped, "2-D only"),
                                      result("my.conv", Disposition::kSkipped, "2-D only"),
                                      result("reference", Disposition::kSkipped, "f64")};
  // reference is not asked for by name: its all-skipped run is reported, not an error.
  RunInfo info = info_with({{"reference", "", true, false}, {"my.conv", "", true, true}});
  EXPECT_EQ(nothing_checked(rs, info), "nothing was checked on my.conv: 2 of 2 SKIPPED, top reasons: 2-D only (2)\n");
  // One case checked is enough.
  std::vector<CaseResult> one = rs;
  one.push_back(result("my.conv", Disposition::kFailed));
  EXPECT_EQ(nothing_checked(one, info), "");
  // A backend that did not run is never blamed.
  info.backends[1].ran = false;
  EXPECT_EQ(nothing_checked(rs, info), "");
}

}  // namespace
}  // namespace kc
