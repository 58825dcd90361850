// The HTML page rendered from the fixtures (two runs on one machine with a regression, one
// run on another with a missed target, a failed re-check and an error), checked for its
// structure without a browser: charts with titled axes and legends, the regression row,
// the tables each run carries, the banner, and nothing fetched from elsewhere.
#include <gtest/gtest.h>

#include "bench_json.h"
#include "render.h"

namespace kc::bench {
namespace {

const std::string kFixtures = KC_DASHBOARD_FIXTURES;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string fixture_page() {
  std::vector<BenchRun> runs;
  for (const char* f : {"kc_machine_b_run1.json", "kc_machine_a_run2.json", "kc_machine_a_run1.json"}) {
    auto run = read_bench_json(kFixtures + "/" + f);
    EXPECT_TRUE(run.ok()) << run.status().to_string();
    runs.push_back(*run);
  }
  order_runs(runs);
  return render_html(runs);
}

TEST(DashboardHtml, OneChartPerCaseAndOpOfEachMachineWithTitledAxes) {
  const std::string html = fixture_page();
  EXPECT_EQ(count(html, "<section class=\"machine\""), 2u);
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 4u);  // conv_forward and pool_inference, per machine
  EXPECT_EQ(count(html, "</svg>"), 4u);
  EXPECT_EQ(count(html, ">commit (run date)</text>"), 4u);
  EXPECT_EQ(count(html, ">GFLOP/s (higher is better)"), 4u);
  EXPECT_EQ(count(html, ">GFLOP/s (higher is better), log scale</text>"), 2u);  // the pools, 100x under the ceiling
  EXPECT_EQ(count(html, "aria-label=\"conv_resnet / conv_forward / warm f32\""), 2u);
  EXPECT_EQ(count(html, ">peer: onednn<title>"), 4u);
  EXPECT_EQ(count(html, ">ceiling: onednn gemm f32<title>"), 4u);
  EXPECT_EQ(count(html, ">a1a1a1a 11-20<title>a1a1a1a 2026-11-20T10:00:00+00:00</title>"), 2u);  // commit, date
}

TEST(DashboardHtml, TheRegressionRowIsFlaggedAndTheRestAreNot) {
  const std::string html = fixture_page();
  EXPECT_EQ(count(html, "<tr class=\"regression\">"), 1u);
  EXPECT_NE(html.find("<tr class=\"regression\"><td class=\"l\">conv_resnet / conv_forward / warm f32</td>"
                      "<td class=\"l\">mykern</td><td>1 ms</td><td>1.2 ms</td><td>+20.0%</td><td>5.0%</td>"
                      "<td class=\"l verdict\">REGRESSION</td>"),
            std::string::npos)
      << html;
  EXPECT_EQ(count(html, "within spread</td>"), 4u);  // the pool's +4% is inside its 8% spread
}

TEST(DashboardHtml, FailuresTargetsAndTheRunsTablesAreShown) {
  const std::string html = fixture_page();
  EXPECT_NE(html.find("<div class=\"banner fail\">"), std::string::npos);
  EXPECT_NE(html.find("target missed: mykern conv_forward / onednn"), std::string::npos);
  EXPECT_NE(html.find("re-check failed: pool_small / pool_inference / cold f32 mykern"), std::string::npos);
  EXPECT_NE(html.find("out of memory preparing the op"), std::string::npos);
  EXPECT_EQ(count(html, "<table class=\"seed\" data-key=\"checkpoint\"><caption>Checkpoint policies"), 2u);
  EXPECT_EQ(count(html, "<table class=\"targets\">"), 2u);
  EXPECT_NE(html.find("<h2>Ratios across machines (latest run of each)</h2>"), std::string::npos);
}

TEST(DashboardHtml, SelfContained) {
  const std::string html = fixture_page();
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
}

}  // namespace
}  // namespace kc::bench
