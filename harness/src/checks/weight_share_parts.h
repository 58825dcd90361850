// weight_share's parts of dy (weight_share.cpp): the two output tiles of the tile split,
// and the known partial sums a kernel gets wrong (one output position, one sample, all
// but the last sample, one tile), with the dw and db each gives, which classify a failure
// and make a pass MISTRUSTED where the data cannot tell them from the right sum.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kc/shape.h"
#include "kc/tensor.h"

namespace kc::checks {

// dy (shape [N, K, out...]) with the elements that `keep` rejects zeroed.
Tensor masked(const Tensor& dy, const std::function<bool(int64_t)>& keep);

// The two output tiles: the outermost spatial dim with two outputs that read input cut
// between them, as near its middle as that allows, so that each tile reads input. Where
// no dim has two, the first dim with two outputs is halved.
struct TileSplit {
  size_t dim = 0;
  int64_t inner = 1, extent = 1, cut = 0;
  bool first(int64_t i) const { return (i / inner) % extent < cut; }  // i: flat index in dy
};

std::optional<TileSplit> tile_split(const ConvGeometry& g);

// A sum over part of the dy elements: which (flat index into [N, K, out...]).
struct Part {
  const char* cls;
  std::string detail;
  std::function<bool(int64_t)> keep;
};

// The partial sums a kernel gets wrong: one output position, one sample, all but the
// last sample, one output tile.
std::vector<Part> partial_parts(const ConvGeometry& g);

// What a part leaves out of dy: some element (one position of one sample keeps all),
// and some element whose window reads input: only those can change dw, while any
// left-out dy changes db.
struct LeftOut {
  bool any = false, read = false;
  bool judged(bool bias) const { return bias ? any : read; }
};

// Each known partial sum that leaves some dy out (partial_parts), with the dw and db it
// gives on dz kept to it: dw only where what it leaves out reads input (the rest adds 0
// to dw on any data, which no data can change), db only with a bias.
struct PartSum {
  Part part;
  LeftOut left;
  Tensor dw, db;
};

std::vector<PartSum> part_sums(const ConvGeometry& g, const Tensor& x, const Tensor& dz);

// The first partial sum whose dw, then db, equals the oracle's (dw, db) exactly, named;
// empty when there is none (see partial_sum_blind_spot in checks/checks.h).
std::string exact_part_sum(const std::vector<PartSum>& sums, const Tensor& dw, const Tensor& db);

}  // namespace kc::checks
