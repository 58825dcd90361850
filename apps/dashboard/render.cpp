#include "render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace kc::bench {
namespace {

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Every target measured on every run (nothing where the run lacks an entry it needs).
std::vector<std::vector<std::optional<Measure>>> measure_all(const std::vector<BenchRun>& runs) {
  std::vector<std::vector<std::optional<Measure>>> m;
  for (const Target& t : targets()) {
    std::vector<std::optional<Measure>> row;
    for (const BenchRun& r : runs) row.push_back(evaluate(t, r.entries));
    m.push_back(std::move(row));
  }
  return m;
}

// A line chart of one target over the runs, with its limit as a dashed line; points
// are green where the target was met, red where it was missed.
std::string chart(const Target& t, const std::vector<std::optional<Measure>>& row) {
  constexpr double kW = 560, kH = 160, kLeft = 70, kRight = 20, kTop = 12, kBottom = 24;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& m : row) {
    if (!m) continue;
    for (double v : {m->value, m->limit}) {
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!(lo <= hi)) return "<p>no run measured this target</p>\n";
  const double pad = hi > lo ? 0.1 * (hi - lo) : std::max(std::fabs(hi) * 0.1, 1e-12);
  lo -= pad;
  hi += pad;
  const size_t n = row.size();
  auto x = [&](size_t i) { return n == 1 ? (kLeft + kW - kRight) / 2 : kLeft + (kW - kLeft - kRight) * i / (n - 1); };
  auto y = [&](double v) { return kTop + (kH - kTop - kBottom) * (hi - v) / (hi - lo); };
  std::string svg = format("<svg width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"%s over runs\">\n", kW, kH,
                           escape(std::string(t.what)).c_str());
  svg +=
      format("<text x=\"4\" y=\"%.1f\" class=\"axis\">%s</text>\n", y(hi - pad) + 4, format_value(t, hi - pad).c_str());
  svg +=
      format("<text x=\"4\" y=\"%.1f\" class=\"axis\">%s</text>\n", y(lo + pad) + 4, format_value(t, lo + pad).c_str());
  std::string limit_path, value_path;
  for (size_t i = 0; i < n; ++i) {
    if (!row[i]) continue;
    if (std::isfinite(row[i]->limit))
      limit_path += format("%s%.1f,%.1f ", limit_path.empty() ? "M" : "L", x(i), y(row[i]->limit));
    if (std::isfinite(row[i]->value))
      value_path += format("%s%.1f,%.1f ", value_path.empty() ? "M" : "L", x(i), y(row[i]->value));
  }
  if (n == 1 && !limit_path.empty()) {  // one run: the limit as a short line across it
    limit_path = format("M%.1f,%.1f L%.1f,%.1f", kLeft, y(row[0]->limit), kW - kRight, y(row[0]->limit));
  }
  svg += "<path class=\"limit\" d=\"" + limit_path + "\"/>\n<path class=\"value\" d=\"" + value_path + "\"/>\n";
  for (size_t i = 0; i < n; ++i) {
    if (!row[i] || !std::isfinite(row[i]->value)) continue;
    svg += format("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" class=\"%s\"><title>%s</title></circle>\n", x(i),
                  y(row[i]->value), row[i]->met ? "met" : "missed", format_value(t, row[i]->value).c_str());
  }
  return svg + "</svg>\n";
}

std::string newest_verdict(const std::vector<std::optional<Measure>>& row) {
  for (size_t i = row.size(); i-- > 0;) {
    if (row[i]) return row[i]->met ? "MET" : "MISSED";
  }
  return "not measured";
}

}  // namespace

void order_runs(std::vector<BenchRun>& runs) {
  std::stable_sort(runs.begin(), runs.end(), [](const BenchRun& a, const BenchRun& b) {
    if (a.date.empty() || b.date.empty()) return !a.date.empty() && b.date.empty();
    return a.date < b.date;
  });
}

std::string run_label(const BenchRun& run) {
  if (!run.commit.empty() && run.commit != "unknown")
    return run.commit.substr(0, 12) + (run.commit.find("+dirty") != std::string::npos ? "+dirty" : "");
  if (!run.recorded.empty()) return run.recorded.substr(0, 12);
  return run.source;
}

std::string render_text(const std::vector<BenchRun>& runs) {
  const auto m = measure_all(runs);
  std::string out = format("%zu run%s, oldest first:\n", runs.size(), runs.size() == 1 ? "" : "s");
  for (size_t i = 0; i < runs.size(); ++i) {
    out +=
        format("  [%zu] %s  %s  %s\n", i + 1, run_label(runs[i]).c_str(), runs[i].date.c_str(), runs[i].host.c_str());
  }
  out += "\n";
  for (size_t k = 0; k < targets().size(); ++k) {
    const Target& t = targets()[k];
    std::string goal, history;
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto& v = m[k][i];
      history += v ? format(" %s%s", format_value(t, v->value).c_str(), v->met ? "" : "!") : std::string(" -");
      if (v) goal = v->goal;
    }
    out += format("%-44s target %-36s newest %-12s history:%s\n", std::string(t.what).c_str(),
                  goal.empty() ? "-" : goal.c_str(), newest_verdict(m[k]).c_str(), history.c_str());
  }
  out += "(! marks a missed target; - a run without the entries it needs)\n";
  return out;
}

namespace {

// The runs, oldest first.
std::string runs_table(const std::vector<BenchRun>& runs) {
  std::string h =
      "<table><tr><th>#</th><th class=\"l\">commit</th><th class=\"l\">date</th><th class=\"l\">host</th>"
      "<th class=\"l\">source</th></tr>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    h += format(
        "<tr><td>%zu</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td>"
        "<td class=\"l\">%s</td></tr>\n",
        i + 1, escape(run_label(runs[i])).c_str(), escape(runs[i].date).c_str(), escape(runs[i].host).c_str(),
        escape(runs[i].source).c_str());
  }
  return h + "</table>\n";
}

// One target: its newest verdict, its chart, and its value in every run that has it.
std::string target_section(const Target& t, const std::vector<BenchRun>& runs,
                           const std::vector<std::optional<Measure>>& m) {
  const std::string verdict = newest_verdict(m);
  std::string h = format("<h2 id=\"%s\">%s: <span class=\"%s\">%s</span></h2>\n", std::string(t.key).c_str(),
                         escape(std::string(t.what)).c_str(), verdict == "MET" ? "met" : "missed", verdict.c_str());
  h += chart(t, m);
  h += "<table><tr><th>#</th><th class=\"l\">commit</th><th>value</th><th class=\"l\">target</th>"
       "<th class=\"l\">verdict</th><th class=\"l\">from</th></tr>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& v = m[i];
    if (!v) continue;
    h += format(
        "<tr><td>%zu</td><td class=\"l\">%s</td><td>%s</td><td class=\"l\">%s</td>"
        "<td class=\"l %s\">%s</td><td class=\"l\">%s</td></tr>\n",
        i + 1, escape(run_label(runs[i])).c_str(), format_value(t, v->value).c_str(), escape(v->goal).c_str(),
        v->met ? "met" : "missed", v->met ? "MET" : "MISSED", escape(v->detail).c_str());
  }
  return h + "</table>\n";
}

// Every entry of any run, per run: real time and GFLOP/s where it has them.
std::string entries_table(const std::vector<BenchRun>& runs) {
  std::vector<std::string> names;
  for (const BenchRun& r : runs) {
    for (const auto& [name, e] : r.entries) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  std::string h = "<h2>entries</h2>\n<table><tr><th class=\"l\">entry</th>";
  for (size_t i = 0; i < runs.size(); ++i) h += format("<th>[%zu] %s</th>", i + 1, escape(run_label(runs[i])).c_str());
  h += "</tr>\n";
  for (const std::string& name : names) {
    h += "<tr><td class=\"l\">" + escape(name) + "</td>";
    for (const BenchRun& r : runs) {
      auto it = r.entries.find(name);
      if (it == r.entries.end()) {
        h += "<td>-</td>";
        continue;
      }
      auto g = it->second.counters.find("GFLOP/s");
      h += format("<td>%.3f ms", 1e3 * it->second.seconds) +
           (g == it->second.counters.end() ? std::string() : format("<br>%.2f GFLOP/s", g->second)) + "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

}  // namespace

std::string render_html(const std::vector<BenchRun>& runs) {
  const auto m = measure_all(runs);
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kcheck-bench dashboard</title>\n"
      "<style>body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:.5em 0 1.5em}"
      "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}"
      ".met{fill:#2a8a2a;color:#2a8a2a}.missed{fill:#c62828;color:#c62828;font-weight:bold}"
      "path.value{fill:none;stroke:#333;stroke-width:1.5}path.limit{fill:none;stroke:#888;stroke-dasharray:6 4}"
      ".axis{font-size:11px;fill:#555}</style></head><body>\n<h1>kcheck-bench dashboard</h1>\n";
  h += format(
      "<p>%zu run%s, oldest first. Every target is a ratio between entries of the same run (DESIGN "
      "section 8); the dashed line is its limit.</p>\n",
      runs.size(), runs.size() == 1 ? "" : "s");
  h += runs_table(runs);
  for (size_t k = 0; k < targets().size(); ++k) h += target_section(targets()[k], runs, m[k]);
  return h + entries_table(runs) + "</body></html>\n";
}

}  // namespace kc::bench
