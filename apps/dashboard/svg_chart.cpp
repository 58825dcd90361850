// Layout in user units of a fixed viewBox, so the page can scale the chart to its column.
// Colours: backends from one palette by position; the peer dark and dashed, the ceiling
// red and dotted, so both read as references rather than competitors.
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "html_text.h"

namespace kc::bench {
namespace {

constexpr double kW = 720, kH = 345, kLeft = 72, kRight = 220, kTop = 34, kBottom = 92;
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// A round step giving about five ticks from 0 to `hi`.
double tick_step(double hi) {
  const double raw = hi / 5.0;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10.0 * p;
}

std::string tick_text(double v) { return format("%g", std::fabs(v) < 1e-12 ? 0.0 : v); }

// The plot's scale: linear from 0, or logarithmic when the values span more than
// kLogSpan (a ceiling far above the kernels would otherwise flatten them onto the axis).
constexpr double kLogSpan = 30.0;

struct Frame {
  size_t n;
  double lo, hi;
  bool log;
  double x(size_t i) const {
    return n <= 1 ? (kLeft + kW - kRight) / 2 : kLeft + 20 + (kW - kLeft - kRight - 40) * i / (n - 1);
  }
  double y(double v) const {
    const double t = log ? (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : v / hi;
    return kTop + (kH - kTop - kBottom) * (1.0 - t);
  }
};

// 1, 2 and 5 times a power of ten: the nearest at or above `v` (up) or at or below it.
double round_125(double v, bool up) {
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  double best = up ? 10.0 * p : p;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (up && m * p >= v) return m * p;
    if (!up && m * p <= v) best = m * p;
  }
  return best;
}

Frame make_frame(const ChartSpec& spec) {
  double top = 0, bottom = INFINITY;
  for (const ChartSeries& c : spec.series) {
    for (const auto& v : c.values) {
      if (!v || !std::isfinite(*v)) continue;
      top = std::max(top, *v);
      if (*v > 0) bottom = std::min(bottom, *v);
    }
  }
  if (!(top > 0)) return {spec.x_labels.size(), 0.0, 1.0, false};
  if (top / bottom > kLogSpan)
    return {spec.x_labels.size(), round_125(bottom / 1.05, false), round_125(top * 1.05, true), true};
  const double step = tick_step(top * 1.05);
  return {spec.x_labels.size(), 0.0, step * std::ceil(top * 1.05 / step), false};
}

std::vector<double> ticks(const Frame& f) {
  std::vector<double> t;
  if (!f.log) {
    const double step = tick_step(f.hi);
    for (double v = 0; v <= f.hi + step * 1e-6; v += step) t.push_back(v);
    return t;
  }
  const bool dense = f.hi / f.lo <= 1e3;  // few decades: 1, 2, 5 in each; else decades only
  for (double d = std::pow(10.0, std::floor(std::log10(f.lo))); d <= f.hi * 1.0001; d *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if ((dense || m == 1.0) && m * d >= f.lo * 0.9999 && m * d <= f.hi * 1.0001) t.push_back(m * d);
    }
  }
  return t;
}

std::string axes(const ChartSpec& spec, const Frame& f) {
  std::string s;
  for (double v : ticks(f)) {
    s += format("<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", kLeft, kW - kRight, f.y(v),
                f.y(v));
    s += format("<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", kLeft - 6, f.y(v) + 4,
                tick_text(v).c_str());
  }
  s += format("<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", kLeft, kLeft, kTop,
              kH - kBottom);
  s += format("<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", kLeft, kW - kRight,
              kH - kBottom, kH - kBottom);
  // At most ~8 labels fit under the plot: past that every k-th run is labelled, and the last.
  const size_t every = (f.n + 7) / 8;
  for (size_t i = 0; i < f.n; ++i) {
    if (i % every != 0 && i + 1 != f.n) continue;
    const double y0 = kH - kBottom + 14;
    const std::string note = i < spec.x_notes.size() ? spec.x_notes[i] : "";
    s += format(
        "<text class=\"tick xl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-30 %.1f %.1f)\">%s",
        f.x(i), y0, f.x(i), y0, escape(spec.x_labels[i] + (note.size() >= 10 ? " " + note.substr(5, 5) : "")).c_str());
    if (!note.empty()) s += "<title>" + escape(spec.x_labels[i] + " " + note) + "</title>";
    s += "</text>\n";
  }
  s += format("<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
              (kLeft + kW - kRight) / 2, kH - 8, escape(spec.x_title).c_str());
  s += format(
      "<text class=\"axis-title\" x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      "%.1f)\">%s</text>\n",
      (kTop + kH - kBottom) / 2, (kTop + kH - kBottom) / 2,
      escape(spec.y_title + (f.log ? ", log scale" : "")).c_str());
  return s;
}

std::string colour(const ChartSeries& c, size_t index) {
  if (c.style == LineStyle::kPeer) return "#333333";
  if (c.style == LineStyle::kCeiling) return "#c62828";
  return kPalette[index % std::size(kPalette)];
}

std::string series_path(const ChartSeries& c, const Frame& f, const std::string& col) {
  const char* dash = c.style == LineStyle::kPeer      ? " stroke-dasharray=\"7 4\""
                     : c.style == LineStyle::kCeiling ? " stroke-dasharray=\"2 4\""
                                                      : "";
  std::string d, dots;
  bool pen = false;
  for (size_t i = 0; i < f.n && i < c.values.size(); ++i) {
    if (!c.values[i]) {
      pen = false;
      continue;
    }
    d += format("%s%.1f,%.1f ", pen ? "L" : "M", f.x(i), f.y(*c.values[i]));
    pen = true;
    dots += format("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s: %.4g</title></circle>", f.x(i),
                   f.y(*c.values[i]), col.c_str(), escape(c.name).c_str(), *c.values[i]);
  }
  return format("<path class=\"series\" d=\"%s\" stroke=\"%s\"%s/>", d.c_str(), col.c_str(), dash) + dots + "\n";
}

std::string legend(const ChartSpec& spec) {
  std::string s = "<g class=\"legend\">";
  size_t solid = 0;
  for (size_t k = 0; k < spec.series.size(); ++k) {
    const ChartSeries& c = spec.series[k];
    const std::string col = colour(c, c.style == LineStyle::kSolid ? solid++ : 0);
    const double y = kTop + 6 + 20 * k, x = kW - kRight + 14;
    const char* dash = c.style == LineStyle::kPeer      ? " stroke-dasharray=\"7 4\""
                       : c.style == LineStyle::kCeiling ? " stroke-dasharray=\"2 4\""
                                                        : "";
    s += format("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"%s/>", x,
                x + 24, y, y, col.c_str(), dash);
    // Long names are cut to the legend's width; the whole name stays in the tooltip.
    const std::string shown = c.name.size() > 26 ? c.name.substr(0, 25) + "\u2026" : c.name;
    s += format("<text class=\"legend-text\" x=\"%.1f\" y=\"%.1f\">%s<title>%s</title></text>\n", x + 30, y + 4,
                escape(shown).c_str(), escape(c.name).c_str());
  }
  return s + "</g>\n";
}

}  // namespace

std::string render_svg_chart(const ChartSpec& spec) {
  const Frame f = make_frame(spec);
  std::string s = format(
      "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
      "aria-label=\"%s\">\n<text class=\"chart-title\" x=\"%.1f\" y=\"20\">%s</text>\n",
      kW, kH, escape(spec.title).c_str(), kLeft, escape(spec.title).c_str());
  s += axes(spec, f);
  size_t solid = 0;
  for (const ChartSeries& c : spec.series) {
    s += series_path(c, f, colour(c, c.style == LineStyle::kSolid ? solid++ : 0));
  }
  return s + legend(spec) + "</svg>\n";
}

}  // namespace kc::bench
