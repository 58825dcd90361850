// The traps of narrow index arithmetic (docs/cases.md, "Boundary sweeps"): the zoo's
// correct conv with one index kept in too few bits, so that it wraps once its quantity
// passes a power of two, as in kernels that store an offset in an int16 or a uint8:
//   batch_index_7_bits     forward reads sample n as n mod 128 (batches past 128)
//   channel_index_8_bits   forward reads input channel c as c mod 256 (past 256 channels)
//   output_index_16_bits   forward stores output o of a plane at o mod 65536; the outputs
//                          past it are never written (planes of more than 65536 outputs)
//   gemm_m_rows_int16      dw's reduction over the implicit GEMM's rows m = n * P + p stops
//                          at 32767 (more than 2^15 rows: batch x outputs per plane)
//   dw_out_channel_7_bits  dw of output channel k lands in k mod 128; the rest stay 0
// Each misbehaves only where its quantity passes the bound; below it, it is trap.none.
#pragma once

#include "kc/shape.h"
#include "kc/status.h"
#include "kc/tensor.h"
#include "trap_conv.h"

namespace kc::traps {

bool is_index_width_trap(Bug bug);

Status index_width_conv_forward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                                const Tensor* b, bool relu, Tensor& y);
Status index_width_conv_backward(const ConvSetup& s, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                                 const Tensor* b, bool relu, const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db);

}  // namespace kc::traps
