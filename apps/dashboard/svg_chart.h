// A line chart as inline SVG, self-contained (no script, no font or file fetched): series
// over the same x positions (runs, oldest first), y from 0 with round ticks, both axes
// titled, a legend. A value absent leaves a gap in its line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kc::bench {

enum class LineStyle { kSolid, kPeer, kCeiling };

struct ChartSeries {
  std::string name;  // legend text
  LineStyle style = LineStyle::kSolid;
  std::vector<std::optional<double>> values;  // one per x position
};

struct ChartSpec {
  std::string title;
  std::string y_title;  // with its unit: "GFLOP/s", "median time (ms)"
  std::string x_title = "commit (run date)";
  std::vector<std::string> x_labels;  // commit, short
  std::vector<std::string> x_notes;   // the run's date (ISO 8601): its month-day follows the label
  std::vector<ChartSeries> series;
};

std::string render_svg_chart(const ChartSpec& spec);

}  // namespace kc::bench
