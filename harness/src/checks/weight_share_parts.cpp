// weight_share's parts of dy: the tile split's cut and the known partial sums, with the
// dw and db each gives (weight_share_parts.h).
#include "weight_share_parts.h"

#include <algorithm>

#include "checks/checks.h"
#include "kc/ref/conv.h"
#include "window.h"

namespace kc::checks {
namespace {

// Whether output o of dim d reads an input element, not only zero padding (a padding
// copy reads input: reflect, replicate and circular).
bool reads_input(const ConvGeometry& g, const DimGeometry& d, int64_t o) {
  return g.mode != PaddingMode::kZeros || rules::touches_input(d, o);
}

// Per output position (flat over out...): whether its window reads an input element,
// in every dim (reads_input); a position that reads none adds 0 to dw on any data.
std::vector<char> position_reads(const ConvGeometry& g) {
  const Dims out = g.spatial.out_dims();
  std::vector<char> reads(static_cast<size_t>(g.spatial.out_count()), 1);
  for (size_t p = 0; p < reads.size(); ++p) {
    int64_t rest = static_cast<int64_t>(p);
    for (size_t d = out.size(); d-- > 0;) {
      reads[p] = reads[p] && reads_input(g, g.spatial.dims[d], rest % out[d]);
      rest /= out[d];
    }
  }
  return reads;
}

// What part p leaves out of the n dy elements; `reads`: per output position.
LeftOut left_out(const Part& p, int64_t n, const std::vector<char>& reads) {
  LeftOut l;
  const int64_t P = static_cast<int64_t>(reads.size());
  for (int64_t i = 0; i < n && !l.read; ++i) {
    if (p.keep(i)) continue;
    l.any = true;
    l.read = reads[static_cast<size_t>(i % P)] != 0;
  }
  return l;
}

}  // namespace

// dy (shape [N, K, out...]) with the elements that `keep` rejects zeroed.
Tensor masked(const Tensor& dy, const std::function<bool(int64_t)>& keep) {
  Tensor m = dy;
  for (int64_t i = 0; i < m.size(); ++i) {
    if (!keep(i)) m[i] = 0.0;
  }
  return m;
}

std::optional<TileSplit> tile_split(const ConvGeometry& g) {
  const Dims out = g.spatial.out_dims();
  std::optional<TileSplit> halved;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] < 2) continue;
    TileSplit s{d, 1, out[d], out[d] / 2};
    for (size_t e = d + 1; e < out.size(); ++e) s.inner *= out[e];
    int64_t lo = -1, hi = -1;  // the first and last output that read input
    for (int64_t o = 0; o < out[d]; ++o) {
      if (!reads_input(g, g.spatial.dims[d], o)) continue;
      if (lo < 0) lo = o;
      hi = o;
    }
    if (lo >= 0 && lo < hi) {  // any cut in (lo, hi] leaves a reading output on each side
      s.cut = std::clamp(s.cut, lo + 1, hi);
      return s;
    }
    if (!halved) halved = s;
  }
  return halved;
}

std::vector<Part> partial_parts(const ConvGeometry& g) {
  const int64_t N = g.batch, P = g.spatial.out_count(), per = g.out_channels * P;
  auto sample = [per](int64_t i) { return i / per; };
  auto position = [P](int64_t i) { return i % P; };
  const char* single = "single position (last write wins)";
  std::vector<Part> parts;
  parts.push_back({single, "= the last output position of the last sample alone",
                   [=](int64_t i) { return sample(i) == N - 1 && position(i) == P - 1; }});
  parts.push_back({single, "= the first output position of the first sample alone",
                   [=](int64_t i) { return sample(i) == 0 && position(i) == 0; }});
  if (N > 1) {
    parts.push_back({single, "= the last sample alone: each sample overwrote the sum",
                     [=](int64_t i) { return sample(i) == N - 1; }});
    parts.push_back({"partial sum", "= sample 0 alone: the sum over the batch is missing",
                     [=](int64_t i) { return sample(i) == 0; }});
  }
  if (N > 2) parts.push_back({"partial sum", "misses the last sample", [=](int64_t i) { return sample(i) < N - 1; }});
  if (const std::optional<TileSplit> s = tile_split(g)) {
    const TileSplit t = *s;
    parts.push_back({"partial sum", "= the first output tile alone", [t](int64_t i) { return t.first(i); }});
    parts.push_back({"partial sum", "= the second output tile alone", [t](int64_t i) { return !t.first(i); }});
  }
  return parts;
}

std::vector<PartSum> part_sums(const ConvGeometry& g, const Tensor& x, const Tensor& dz) {
  const std::vector<char> reads = position_reads(g);
  std::vector<PartSum> sums;
  for (Part& p : partial_parts(g)) {
    const LeftOut l = left_out(p, dz.size(), reads);
    if (!l.any) continue;
    const Tensor m = masked(dz, p.keep);
    Tensor dw = l.read ? ref::conv_backward_weight(g, x, m) : Tensor{};
    Tensor db = g.bias ? ref::conv_backward_bias(g, m) : Tensor{};
    sums.push_back({std::move(p), l, std::move(dw), std::move(db)});
  }
  return sums;
}

std::string exact_part_sum(const std::vector<PartSum>& sums, const Tensor& dw, const Tensor& db) {
  for (const bool bias : {false, true}) {
    const Tensor& ref = bias ? db : dw;
    if (ref.size() == 0) continue;
    for (const PartSum& s : sums) {
      const Tensor& t = bias ? s.db : s.dw;
      if (!s.left.judged(bias) || !std::equal(t.data.begin(), t.data.end(), ref.data.begin(), ref.data.end())) continue;
      const char* which = bias ? "db" : "dw";
      return "the data cannot tell the right sum from this mistake: " + std::string(which) + " " + s.part.detail +
             " (" + s.part.cls + ") gives exactly the right " + which + " here, as what it leaves out adds up to 0";
    }
  }
  return {};
}

}  // namespace kc::checks

namespace kc {

// See checks/checks.h: the exact rule of weight_share's trust, for the generator's steering.
std::string partial_sum_blind_spot(const ConvGeometry& g, const Tensor& x, const Tensor& dz, const Tensor& dw,
                                   const Tensor& db) {
  return checks::exact_part_sum(checks::part_sums(g, x, dz), dw, db);
}

}  // namespace kc
