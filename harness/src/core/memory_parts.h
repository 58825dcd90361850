// Internal to kc_core: the parts of an op's host memory estimate (validate_limits.cpp's
// check_memory), which each op module gives for its case (memory_parts in
// ops/op_module.h), and what can make each part large, so that an over-cap case names
// the field to shrink. Every size saturates (no overflow within the field rules).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/validate.h"
#include "kc/case.h"
#include "kc/shape.h"

namespace kc {

// The product of the extents, saturating.
int64_t product(const Dims& d);

// A field that can make a part of the memory large, and by how much it multiplies that
// part over what the input alone would make it (a kernel of 961 taps: its im2col by 961).
struct Cause {
  double factor = 1.0;
  std::string field;  // the path the message starts with: "conv.kernel", "input", ...
  std::string why;    // that field as the message names it: "conv.kernel [31, 31]"
};

// One part of an op's memory estimate: a tensor with its gradient (or the reference's
// workspace), its shape, the f64 arrays of that shape the reference and one candidate
// hold, and what can make it large (`base` when none of `causes` does).
struct MemoryPart {
  std::string what;
  Dims shape;
  int64_t arrays = 1;
  Cause base;
  std::vector<Cause> causes;
  int64_t elements() const { return product(shape); }
  int64_t bytes() const { return saturating_mul(saturating_mul(elements(), arrays), 8); }
};

// "5" for one extent, "[3, 3]" for more.
std::string dims_text(const Dims& d);
Dims concat(Dims a, const Dims& b);
// a / b, b at least 1.
double ratio(int64_t a, int64_t b);

// What makes the padded extent large: explicit padding itself, or for same/same_lower
// the dilated kernel extent d * (k - 1) it pads for (the larger of its two factors).
Cause padding_cause(const std::string& f, const PadSpec& spec, const SpatialGeometry& g, double factor);

// A pool's parts: x and dx, y and dy (and the indices, with `y_copies` over 4).
std::vector<MemoryPart> pool_parts(const SpatialGeometry& s, const Dims& x, const Dims& y, const PadSpec& pad,
                                   const std::string& f, const Cause& input, int64_t y_copies);

// Outputs times taps, per plane: a window op's work per (sample, channel), in double.
double window_work(const SpatialGeometry& s);

}  // namespace kc
