// Tables are plain HTML with classes the page's stylesheet colours: a flagged row is
// class "regression", a verdict cell "met" or "missed". Every string from a run is escaped.
#include "html_sections.h"

#include <algorithm>
#include <set>

#include "html_text.h"
#include "regression.h"

namespace kc::bench {
namespace {

std::string ms(double seconds) { return format("%.4g ms", 1e3 * seconds); }

// Counts (bytes) whole, other values to 4 digits.
std::string number(double v) {
  return v >= 1e4 && v == static_cast<double>(static_cast<long long>(v)) ? format("%.0f", v) : format("%.4g", v);
}

std::string errors_list(const std::vector<Machine>& machines) {
  std::string h;
  for (const Machine& m : machines) {
    for (const RunError& e : m.runs.back()->errors) {
      h += "<li>" + escape(run_label(*m.runs.back()) + " on " + m.key + ": " + e.name + ": " + e.message) + "</li>\n";
    }
  }
  return h;
}

}  // namespace

std::string verdict_html(const Verdict& v, const std::vector<Machine>& machines) {
  const std::string errors = errors_list(machines);
  if (v.ok() && errors.empty())
    return "<div class=\"banner ok\">Latest run of every machine: every target met, no regression, no failure.</div>\n";
  std::string h = "<div class=\"banner fail\"><strong>Needs attention (latest run of each machine)</strong><ul>\n";
  for (const std::string& r : v.reasons) h += "<li>" + escape(r) + "</li>\n";
  if (!errors.empty()) h += errors;
  return h + "</ul>" + (errors.empty() ? "" : "<p>Entries with an error were not timed.</p>") + "</div>\n";
}

std::string runs_html(const Machine& m) {
  std::string h =
      "<table class=\"runs\"><tr><th>#</th><th class=\"l\">commit</th><th class=\"l\">date</th>"
      "<th class=\"l\">format</th><th class=\"l\">source</th><th class=\"l\">cpu / gpu / libraries</th></tr>\n";
  for (size_t i = 0; i < m.runs.size(); ++i) {
    const BenchRun& r = *m.runs[i];
    const std::string hw =
        r.cpu + (r.gpu.empty() ? "" : " / " + r.gpu) + (r.libraries.empty() ? "" : " / " + r.libraries);
    h += format(
        "<tr><td>%zu</td><td class=\"l mono\">%s</td><td class=\"l nw\">%s</td><td class=\"l nw\">%s</td>"
        "<td class=\"l mono\">%s</td><td class=\"l\">%s</td></tr>\n",
        i + 1, escape(run_label(r)).c_str(), escape(r.date).c_str(),
        r.format == RunFormat::kKcheckBench ? "kcheck bench" : "kcheck-bench", escape(r.source).c_str(),
        escape(hw.empty() ? "-" : hw).c_str());
  }
  return h + "</table>\n";
}

std::string changes_html(const Machine& m) {
  const BenchRun& latest = *m.runs.back();
  if (m.runs.size() < 2) return "<p class=\"note\">One run on this machine: nothing to compare yet.</p>\n";
  const BenchRun& prev = *m.runs[m.runs.size() - 2];
  std::vector<Change> changes = compare_runs(prev, latest);
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.regression > b.regression; });
  std::string h = format("<table class=\"changes\"><caption>latest %s vs previous %s (same machine)</caption>\n",
                         escape(run_label(latest)).c_str(), escape(run_label(prev)).c_str());
  h += "<tr><th class=\"l\">entry</th><th class=\"l\">backend</th><th>previous</th><th>latest</th><th>change</th>"
       "<th>threshold (spread)</th><th class=\"l\">verdict</th></tr>\n";
  for (const Change& c : changes) {
    const char* verdict = c.regression ? "REGRESSION" : c.change < -c.threshold ? "faster" : "within spread";
    h += format(
        "<tr class=\"%s\"><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%s</td><td>%s</td><td>%+.1f%%</td>"
        "<td>%.1f%%</td><td class=\"l verdict\">%s</td></tr>\n",
        c.regression              ? "regression"
        : c.change < -c.threshold ? "faster"
                                  : "same",
        escape(c.key).c_str(), escape(c.backend).c_str(), ms(c.before).c_str(), ms(c.after).c_str(), 100 * c.change,
        100 * c.threshold, verdict);
  }
  if (changes.empty()) h += "<tr><td colspan=\"7\" class=\"l\">no entry in both runs</td></tr>\n";
  return h + "</table>\n";
}

std::string targets_html(const Machine& m) {
  const BenchRun& latest = *m.runs.back();
  if (latest.targets.empty()) return "";
  std::string h =
      "<table class=\"targets\"><tr><th class=\"l\">target</th><th>latest</th><th class=\"l\">goal</th>"
      "<th class=\"l\">verdict</th><th class=\"l\">history, oldest first</th><th class=\"l\">from</th></tr>\n";
  for (const RunTarget& t : latest.targets) {
    std::string history;
    for (const BenchRun* r : m.runs) {
      for (const RunTarget& o : r->targets) {
        if (o.key == t.key)
          history += format("%s%s%s", history.empty() ? "" : " &rarr; ", number(o.value).c_str(), o.met ? "" : "!");
      }
    }
    h += format(
        "<tr><td class=\"l\">%s</td><td>%s</td><td class=\"l\">%s</td><td class=\"l %s\">%s</td>"
        "<td class=\"l\">%s</td><td class=\"l\">%s</td></tr>\n",
        escape(t.what).c_str(), number(t.value).c_str(), escape(t.goal).c_str(), t.met ? "met" : "missed",
        t.met ? "MET" : "MISSED", history.c_str(), escape(t.detail).c_str());
  }
  return h + "</table>\n<p class=\"note\">! marks a run that missed the target.</p>\n";
}

std::string run_tables_html(const BenchRun& run) {
  std::string h;
  for (const RunTable& t : run.tables) {
    h += format("<table class=\"seed\" data-key=\"%s\"><caption>%s</caption>\n<tr>", escape(t.key).c_str(),
                escape(t.title.empty() ? t.key : t.title).c_str());
    for (const std::string& c : t.columns) h += "<th class=\"l\">" + escape(c) + "</th>";
    h += "</tr>\n";
    for (const auto& row : t.rows) {
      h += "<tr>";
      for (const std::string& v : row) h += "<td class=\"l\">" + escape(v) + "</td>";
      h += "</tr>\n";
    }
    h += "</table>\n" + (t.note.empty() ? std::string() : "<p class=\"note\">" + escape(t.note) + "</p>\n");
  }
  return h;
}

std::string ratios_across_machines_html(const std::vector<Machine>& machines) {
  std::set<std::pair<std::string, std::string>> rows;  // (chart key, backend)
  std::vector<const Machine*> shown;                   // kcheck-bench runs have no ratios to show
  for (const Machine& m : machines) {
    if (m.runs.back()->format == RunFormat::kKcheckBench) shown.push_back(&m);
  }
  for (const Machine* m : shown) {
    for (const Sample& s : m->runs.back()->samples) {
      if (s.ratio_to_peer > 0 || s.fraction_of_ceiling > 0) rows.insert({s.chart_key(), s.backend});
    }
  }
  if (shown.size() < 2 || rows.empty()) return "";
  std::string h =
      "<h2>Ratios across machines (latest run of each)</h2>\n<table class=\"ratios\"><tr><th class=\"l\">entry</th>"
      "<th class=\"l\">backend</th>";
  for (const Machine* m : shown) h += "<th>" + escape(m->key) + "<br>vs peer / of ceiling</th>";
  h += "</tr>\n";
  for (const auto& [key, backend] : rows) {
    h += "<tr><td class=\"l\">" + escape(key) + "</td><td class=\"l\">" + escape(backend) + "</td>";
    for (const Machine* m : shown) {
      const Sample* s = find_sample(*m->runs.back(), key, backend);
      h += s ? format("<td>%.2fx / %.0f%%</td>", s->ratio_to_peer, 100 * s->fraction_of_ceiling) : "<td>-</td>";
    }
    h += "</tr>\n";
  }
  return h +
         "</table>\n<p class=\"note\">Ratios compare across machines; absolute times do not (docs/dashboard.md, "
         "&ldquo;Machines&rdquo;).</p>\n";
}

}  // namespace kc::bench
