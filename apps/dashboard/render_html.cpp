// The page: a verdict banner, then one section per machine (its runs, its latest run
// against the previous one, its targets, the tables its latest run carries, its charts),
// then the ratios of all machines side by side. Style inline; no script.
#include "html_sections.h"
#include "html_text.h"
#include "machine_charts.h"
#include "render.h"

namespace kc::bench {
namespace {

constexpr const char* kStyle =
    "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1.5em;"
    "color:#222;background:#fafafa}"
    "h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}"
    "h3.case{margin:1.2em 0 .4em;font-family:monospace;font-size:1.05em}"
    ".sub{color:#666;margin-top:0}.note{color:#666;font-size:.9em}.mono{font-family:monospace}"
    "table{border-collapse:collapse;margin:.5em 0 1.2em;background:#fff;font-size:.9em}"
    "caption{text-align:left;font-weight:bold;padding:.3em 0;white-space:nowrap}.nw{white-space:nowrap}"
    "td,th{border:1px solid #ddd;padding:.25em .6em;text-align:right}th{background:#f0f0f0}"
    "td.l,th.l{text-align:left}.met{color:#2a8a2a;font-weight:bold}.missed{color:#c62828;font-weight:bold}"
    "tr.regression td{background:#fde8e8}tr.regression td.verdict{color:#c62828;font-weight:bold}"
    "tr.faster td.verdict{color:#2a8a2a}"
    ".banner{padding:.8em 1.2em;border-radius:6px;margin:1em 0;font-size:1.05em}"
    ".banner.ok{background:#e6f4e6;border:1px solid #2a8a2a}.banner.fail{background:#fde8e8;border:2px solid #c62828}"
    ".banner ul{margin:.4em 0}"
    ".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(620px,1fr));gap:12px}"
    "figure{margin:0;background:#fff;border:1px solid #ddd;border-radius:4px;padding:4px}"
    "svg.chart{width:100%;height:auto;font-family:'DejaVu Sans',Helvetica,Arial,sans-serif}"
    ".chart-title{font-size:14px;font-weight:bold;font-family:monospace}.tick{font-size:11px;fill:#555}"
    ".axis-title{font-size:12px;fill:#333}.legend-text{font-size:12px;fill:#222}"
    "line.grid{stroke:#e6e6e6}line.axis{stroke:#444}path.series{fill:none;stroke-width:2.2}";

std::string machine_section(const Machine& m, size_t index) {
  const BenchRun& latest = *m.runs.back();
  std::string h = format("<section class=\"machine\" id=\"machine-%zu\">\n<h2>Machine %zu: %s</h2>\n", index, index,
                         escape(m.key).c_str());
  h += format(
      "<p class=\"sub\">%zu run%s, oldest first. Absolute times and GFLOP/s compare only between these runs.</p>\n",
      m.runs.size(), m.runs.size() == 1 ? "" : "s");
  h += runs_html(m);
  h += "<h3>Latest vs previous run</h3>\n" + changes_html(m);
  if (const std::string t = targets_html(m); !t.empty()) h += "<h3>Targets (latest run)</h3>\n" + t;
  if (const std::string t = run_tables_html(latest); !t.empty()) h += "<h3>Tables of the latest run</h3>\n" + t;
  h += "<h3>History per case and op</h3>\n"
       "<p class=\"note\">One line per backend; the peer dashed, the op's ceiling (roofline) dotted red. "
       "Hover a point for its value, a commit for its date.</p>\n";
  return h + machine_charts_html(m) + "</section>\n";
}

}  // namespace

std::string render_html(const std::vector<BenchRun>& runs) {
  const auto machines = group_by_machine(runs);
  std::string h = std::string("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n") +
                  "<title>kernelcheck bench dashboard</title>\n<style>" + kStyle + "</style></head><body>\n" +
                  "<h1>kernelcheck bench dashboard</h1>\n";
  std::string first, last;  // runs given on the command line follow the history: not in date order
  for (const BenchRun& r : runs) {
    if (r.date.empty()) continue;
    if (first.empty() || r.date < first) first = r.date;
    if (last.empty() || r.date > last) last = r.date;
  }
  h += format(
      "<p class=\"sub\">%zu run%s on %zu machine%s, %s to %s. Regression: a slowdown beyond the larger "
      "measured spread of the two runs, and at least 5%%.</p>\n",
      runs.size(), runs.size() == 1 ? "" : "s", machines.size(), machines.size() == 1 ? "" : "s", escape(first).c_str(),
      escape(last).c_str());
  h += verdict_html(judge(runs), machines);
  for (size_t i = 0; i < machines.size(); ++i) h += machine_section(machines[i], i + 1);
  return h + ratios_across_machines_html(machines) + "</body></html>\n";
}

}  // namespace kc::bench
