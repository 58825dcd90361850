// Tensors between kc and oneDNN memory. A kc::Tensor holds f64 values already rounded
// to the case dtype in plain row-major order; oneDNN memory holds the case dtype in
// whatever layout a primitive chose. Values cross unchanged: an input is representable
// in its dtype, an output is stored in it, so both conversions are exact (and no
// oneDNN conversion, which may flush subnormals, touches the inputs).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>

#include "kc/dtype.h"
#include "kc/tensor.h"

namespace kc::onednn {

using dnnl::memory;

// One engine and one in-order stream per backend.
struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

// f32, bf16 or f16; none for f64 (oneDNN has no f64 convolution or pooling).
std::optional<memory::data_type> data_type(DType t);
memory::dims to_dims(const Dims& d);
// a, ab, abc, ... for ndims 1 to 6: the plain row-major tag (nchw, oihw, goihw, ...).
memory::format_tag plain_tag(size_t ndims);
memory::desc plain_desc(const memory::dims& dims, memory::data_type t);

// t's values as `dims` (the same element count: grouped weights view [Cout, Cin/G, k...]
// as [G, Cout/G, Cin/G, k...]) in the layout `want`, reordered when that is not plain.
memory from_tensor(Context& ctx, const Tensor& t, const memory::dims& dims, const memory::desc& want);

// m's values in plain order into `out` (its size must match), tagged with `dtype`.
void to_tensor(Context& ctx, const memory& m, DType dtype, Tensor& out);

// m as a plain memory of the same dims and data type (m itself when it is plain).
memory to_plain(Context& ctx, const memory& m);
// m reordered into `want` (m itself when the descs are equal).
memory reordered(Context& ctx, memory m, const memory::desc& want);

}  // namespace kc::onednn
