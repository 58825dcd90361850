// Layout in user units of a fixed viewBox, so the page can scale the chart to its column.
// Colours: backends from one palette by position; the peer dark and dashed, the ceiling
// red and dotted, so both read as references rather than competitors.
#include "svg_chart.h"

#include <algorithm>
#include <cmath>

#include "html_text.h"

namespace kc::bench {
namespace {

constexpr double kW = 720, kH = 330, kLeft = 72, kRight = 220, kTop = 34, kBottom = 78;
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

struct Frame {
  size_t n;
  double hi;
  double x(size_t i) const {
    return n <= 1 ? (kLeft + kW - kRight) / 2 : kLeft + 20 + (kW - kLeft - kRight - 40) * i / (n - 1);
  }
  double y(double v) const { return kTop + (kH - kTop - kBottom) * (1.0 - v / hi); }
};

std::string axes(const ChartSpec& spec, const Frame& f, double step) {
  std::string s;
  for (double v = 0; v <= f.hi + step * 1e-6; v += step) {
    s += format("<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", kLeft, kW - kRight, f.y(v),
                f.y(v));
    s += format("<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", kLeft - 6, f.y(v) + 4,
                tick_text(v).c_str());
  }
  s += format("<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", kLeft, kLeft, kTop,
              kH - kBottom);
  s += format("<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", kLeft, kW - kRight,
              kH - kBottom, kH - kBottom);
  for (size_t i = 0; i < f.n; ++i) {
    const double y0 = kH - kBottom + 14;
    s += format(
        "<text class=\"tick xl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-30 %.1f %.1f)\">%s",
        f.x(i), y0, f.x(i), y0, escape(spec.x_labels[i]).c_str());
    if (i < spec.x_notes.size() && !spec.x_notes[i].empty())
      s += "<title>" + escape(spec.x_labels[i] + " " + spec.x_notes[i]) + "</title>";
    s += "</text>\n";
  }
  s += format("<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
              (kLeft + kW - kRight) / 2, kH - 8, escape(spec.x_title).c_str());
  s += format(
      "<text class=\"axis-title\" x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      "%.1f)\">%s</text>\n",
      (kTop + kH - kBottom) / 2, (kTop + kH - kBottom) / 2, escape(spec.y_title).c_str());
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
  double top = 0;
  for (const ChartSeries& c : spec.series) {
    for (const auto& v : c.values) {
      if (v && std::isfinite(*v)) top = std::max(top, *v);
    }
  }
  const double step = tick_step(top > 0 ? top * 1.05 : 1.0);
  const Frame f{spec.x_labels.size(), step * std::ceil((top > 0 ? top * 1.05 : 1.0) / step)};
  std::string s = format(
      "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
      "aria-label=\"%s\">\n<text class=\"chart-title\" x=\"%.1f\" y=\"20\">%s</text>\n",
      kW, kH, escape(spec.title).c_str(), kLeft, escape(spec.title).c_str());
  s += axes(spec, f, step);
  size_t solid = 0;
  for (const ChartSeries& c : spec.series) {
    s += series_path(c, f, colour(c, c.style == LineStyle::kSolid ? solid++ : 0));
  }
  return s + legend(spec) + "</svg>\n";
}

}  // namespace kc::bench
