// Internal to the state check across shapes (state_shapes.h): a change of one field of a
// case by one step, and the changes the op modules' add_shape_mutations list: a conv's
// channels, out channels, stride and padding; a pool's channels, stride and padding.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kc/case.h"

namespace kc::checks {

// Changes one field of the case by one step up (+1) or down (-1) and says how ("batch 1
// -> 2"), or returns "" where that step leaves no valid value. Up is tried first: a plan
// made for the case and looked up by a key that misses the field is too small for a
// larger variant (samples, rows or channels left out), and reused silently by a smaller one.
using ShapeMutation = std::function<std::string(Case&, int64_t)>;

// Channels change by a whole group, so that the groups still divide them.
std::string change_count(const std::string& field, int64_t& count, int64_t groups, int64_t step);
// Every stride one step (an empty stride is the op's default: 1 for conv, the kernel for pools).
std::string change_stride(Dims& stride, const Dims& defaults, int64_t step);
// No padding becomes 1 on every side; any other padding becomes none (one step only).
std::string change_padding(PadSpec& p, size_t rank, int64_t step);

// A conv's changes; `conv` finds the conv in a variant.
void add_conv_mutations(std::vector<ShapeMutation>& m, const ConvParams& p, std::function<ConvParams&(Case&)> conv);

// A pool's changes (`Pool` its params type).
template <typename Pool>
void add_pool_mutations(std::vector<ShapeMutation>& m, const Pool& p) {
  const size_t rank = p.kernel.size();
  const Dims kernel = p.kernel;
  m.push_back([](Case& v, int64_t step) { return change_count("channels", v.input.channels, 1, step); });
  m.push_back([kernel](Case& v, int64_t step) { return change_stride(std::get<Pool>(v.op).stride, kernel, step); });
  m.push_back([rank](Case& v, int64_t step) { return change_padding(std::get<Pool>(v.op).padding, rank, step); });
}

}  // namespace kc::checks
