// Internal to kcheck explain: the text every op's explain (`explain` in each op module's
// `<op>_cli.cpp`) is printed with.
#pragma once

#include <string>

#include "kc/shape.h"

namespace kc::cli {

// A byte count in the largest binary unit that keeps it at 1 or more (B, KiB, MiB, GiB).
std::string mib(double bytes);
// One row per spatial dim: in, kernel, stride, dilation, padding, out, receptive extent
// and erosion (input positions with no output centred over them).
void print_dims(const SpatialGeometry& g);

}  // namespace kc::cli
