#include "machine_charts.h"

#include "html_text.h"

namespace kc::bench {
namespace {

bool all_have_gflops(const Machine& m, const std::string& key) {
  for (const BenchRun* r : m.runs) {
    for (const Sample& s : r->samples) {
      if (s.chart_key() == key && !(s.gflops > 0.0)) return false;
    }
  }
  return true;
}

// The sample whose roofline stands for the op in this run: the peer's, else the first.
const Sample* ceiling_source(const BenchRun& r, const std::string& key) {
  const Sample* first = nullptr;
  for (const Sample& s : r.samples) {
    if (s.chart_key() != key || !(s.fraction_of_ceiling > 0.0)) continue;
    if (s.backend == s.peer) return &s;
    if (first == nullptr) first = &s;
  }
  return first;
}

// A commit as an axis label: 7 digits, '+' when the tree was dirty; else the file name.
std::string short_label(const BenchRun& r) {
  const std::string l = run_label(r);
  const bool dirty = l.find("+dirty") != std::string::npos;
  if (l != r.source) return l.substr(0, 7) + (dirty ? "+" : "");
  return l.size() > 16 ? "..." + l.substr(l.size() - 13) : l;
}

}  // namespace

ChartSpec machine_chart(const Machine& m, const std::string& key) {
  const bool gflops = all_have_gflops(m, key);
  ChartSpec spec;
  spec.title = key;
  spec.y_title = gflops ? "GFLOP/s (higher is better)" : "median time, ms (lower is better)";
  for (const BenchRun* r : m.runs) {
    spec.x_labels.push_back(short_label(*r));
    spec.x_notes.push_back(r->date);
  }
  auto value = [&](const Sample& s) { return gflops ? s.gflops : 1e3 * s.seconds; };
  for (const std::string& backend : chart_backends(m, key)) {
    ChartSeries c{backend, LineStyle::kSolid, {}};
    for (const BenchRun* r : m.runs) {
      const Sample* s = find_sample(*r, key, backend);
      c.values.push_back(s ? std::optional<double>(value(*s)) : std::nullopt);
      if (s && s->peer == backend) c.style = LineStyle::kPeer;
    }
    if (c.style == LineStyle::kPeer) c.name = "peer: " + backend;
    spec.series.push_back(std::move(c));
  }
  ChartSeries ceiling{"ceiling", LineStyle::kCeiling, {}};
  bool any = false;
  for (const BenchRun* r : m.runs) {
    const Sample* s = ceiling_source(*r, key);
    if (s != nullptr && !s->ceiling.empty()) ceiling.name = "ceiling: " + s->ceiling;
    ceiling.values.push_back(s ? std::optional<double>(gflops ? s->gflops / s->fraction_of_ceiling
                                                              : 1e3 * s->seconds * s->fraction_of_ceiling)
                               : std::nullopt);
    any = any || s != nullptr;
  }
  if (any) spec.series.push_back(std::move(ceiling));
  return spec;
}

std::string machine_charts_html(const Machine& m) {
  // One grid for the machine: the titles name the case, and sorted keys keep a case's ops together.
  std::string h = "<div class=\"charts\">\n";
  for (const std::string& key : chart_keys(m))
    h += "<figure>" + render_svg_chart(machine_chart(m, key)) + "</figure>\n";
  return h + "</div>\n";
}

}  // namespace kc::bench
