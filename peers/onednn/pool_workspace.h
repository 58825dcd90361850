// oneDNN's max-pool workspace and the contract's argmax indices. The workspace holds,
// per output element, the offset of the chosen tap inside its window, row-major over
// the kernel dims (kd*KH*KW + kh*KW + kw), padding taps counted: verified against the
// reference on ties, NaN, -inf and padding (tests/peers/onednn_test.cpp). The contract
// holds the flat position in the unpadded input plane (ih*W + iw). A tap in the padding
// (oneDNN picks one for a window of only -inf) has no such position: it decodes as -1,
// and -1 encodes back to the window's first padding tap.
#pragma once

#include <cstdint>
#include <vector>

#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"

namespace kc::onednn {

// offsets: one per output element of g.y_shape(), plain order.
void decode_window_offsets(const PoolGeometry& g, const std::vector<int64_t>& offsets, IndexTensor& indices);

// The inverse; refuses an index that is neither a position of its window nor -1.
StatusOr<std::vector<int64_t>> encode_window_offsets(const PoolGeometry& g, const IndexTensor& indices);

}  // namespace kc::onednn
