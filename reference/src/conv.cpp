// The reference convolution, made fast with im2col + Eigen GEMM in f64.
//
// For each sample n and group g, with xp the padded input (pad.h), P the number of
// output positions and K the kernel positions:
//   col[(ci, k), o]  = xp[n, g*Cin/G + ci, o*s + k*d]            (im2col)
//   y_g[n]           = W_g * col + b_g                           W_g: [Cout/G, Cin/G*K]
//   dcol             = W_g^T * dy_g[n];  dxp += col2im(dcol);  dx = pad_adjoint(dxp)
//   dW_g            += dy_g[n] * col^T                            (sum over n and o)
//   db[co]           = sum_n sum_o dy[n, co, o]
// More on the method: docs/notes.md, section reference/src/conv.cpp.
#include "kc/ref/conv.h"

#include <Eigen/Core>
#include <algorithm>
#include <array>

#include "core/invariant.h"
#include "kc/ref/pad.h"

namespace kc::ref {
namespace {

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapMat = Eigen::Map<RowMat>;
using ConstMapMat = Eigen::Map<const RowMat>;

// The three spatial dims of a convolution over an already padded input.
struct Layout {
  std::array<DimGeometry, 3> d;
  int64_t cpg = 1;        // input channels per group
  int64_t kpg = 1;        // output channels per group
  int64_t positions = 1;  // P: output positions
  int64_t taps = 1;       // K: kernel positions
  int64_t padded = 1;     // elements of one padded input plane

  explicit Layout(const ConvGeometry& g)
      : d(g.spatial.as_3d()),
        cpg(g.in_per_group()),
        kpg(g.out_per_group()),
        positions(g.spatial.out_count()),
        taps(g.spatial.kernel_count()),
        padded(g.spatial.padded_count()) {}
  int64_t rows() const { return cpg * taps; }  // rows of col
};

// Calls f(row, col_index, xp_offset, count, step) for every run of one output row:
// col[row, col_index + j] pairs with xp_group[xp_offset + j*step] for j < count, where
// xp_group holds the cpg padded planes of one group of one sample.
template <class F>
void for_each_col_run(const Layout& L, F f) {
  const auto& d = L.d;
  const int64_t ph = d[1].padded(), pw = d[2].padded();
  int64_t row = 0;
  for (int64_t ci = 0; ci < L.cpg; ++ci) {
    for (int64_t ka = 0; ka < d[0].kernel; ++ka) {
      for (int64_t kb = 0; kb < d[1].kernel; ++kb) {
        for (int64_t kc = 0; kc < d[2].kernel; ++kc, ++row) {
          int64_t p = 0;
          for (int64_t oa = 0; oa < d[0].out; ++oa) {
            const int64_t ia = oa * d[0].stride + ka * d[0].dilation;
            for (int64_t ob = 0; ob < d[1].out; ++ob, p += d[2].out) {
              const int64_t ib = ob * d[1].stride + kb * d[1].dilation;
              const int64_t base = ci * L.padded + (ia * ph + ib) * pw + kc * d[2].dilation;
              f(row, p, base, d[2].out, d[2].stride);
            }
          }
        }
      }
    }
  }
}

void im2col(const Layout& L, const double* xp_group, RowMat& col) {
  double* c = col.data();
  const int64_t P = L.positions;
  for_each_col_run(L, [&](int64_t r, int64_t p, int64_t off, int64_t count, int64_t step) {
    double* dst = c + r * P + p;
    const double* src = xp_group + off;
    if (step == 1) {
      std::copy(src, src + count, dst);
    } else {
      for (int64_t j = 0; j < count; ++j) dst[j] = src[j * step];
    }
  });
}

void col2im_add(const Layout& L, const RowMat& dcol, double* dxp_group) {
  const double* c = dcol.data();
  const int64_t P = L.positions;
  for_each_col_run(L, [&](int64_t r, int64_t p, int64_t off, int64_t count, int64_t step) {
    const double* src = c + r * P + p;
    double* dst = dxp_group + off;
    for (int64_t j = 0; j < count; ++j) dst[j * step] += src[j];
  });
}

// Matrices reused across calls on this thread: a fresh im2col matrix of a large case is
// mmapped by malloc and page-faults on every call, which would cost more than the copy.
enum Workspace { kCol, kLhs, kRhs, kOut, kWorkspaces };
RowMat& workspace(Workspace which, int64_t rows, int64_t cols) {
  thread_local std::array<RowMat, kWorkspaces> w;
  w[which].resize(rows, cols);
  return w[which];
}
RowMat& col_workspace(int64_t rows, int64_t cols) { return workspace(kCol, rows, cols); }

// A block of a tensor (row-major, rows x cols from `data`) copied into workspace `which`.
const RowMat& aligned_copy(Workspace which, const double* data, int64_t rows, int64_t cols) {
  RowMat& m = workspace(which, rows, cols);
  m = ConstMapMat(data, rows, cols);
  return m;
}

// Offsets of group grp of sample n in the padded input, the output, and the weights.
int64_t xp_offset(const ConvGeometry& g, const Layout& L, int64_t n, int64_t grp) {
  return (n * g.in_channels + grp * L.cpg) * L.padded;
}
int64_t y_offset(const ConvGeometry& g, const Layout& L, int64_t n, int64_t grp) {
  return (n * g.out_channels + grp * L.kpg) * L.positions;
}
int64_t w_offset(const Layout& L, int64_t grp) { return grp * L.kpg * L.rows(); }

}  // namespace

Tensor conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b) {
  KC_INVARIANT(x.shape == g.x_shape() && w.shape == g.w_shape());
  KC_INVARIANT(b == nullptr || b->shape == g.b_shape());
  const Layout L(g);
  const Tensor xp = pad(x, g.spatial, g.mode);
  Tensor y = Tensor::zeros(DType::kF64, g.y_shape());
  RowMat& col = col_workspace(L.rows(), L.positions);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      im2col(L, xp.data.data() + xp_offset(g, L, n, grp), col);
      const RowMat& wg = aligned_copy(kLhs, w.data.data() + w_offset(L, grp), L.kpg, L.rows());
      RowMat& out = workspace(kOut, L.kpg, L.positions);
      out.noalias() = wg * col;
      MapMat yg(y.data.data() + y_offset(g, L, n, grp), L.kpg, L.positions);
      yg = out;
      if (b == nullptr) continue;
      for (int64_t co = 0; co < L.kpg; ++co) yg.row(co).array() += (*b)[grp * L.kpg + co];
    }
  }
  return y;
}

Tensor conv_backward_data(const ConvGeometry& g, const Tensor& dy, const Tensor& w) {
  KC_INVARIANT(dy.shape == g.y_shape() && w.shape == g.w_shape());
  const Layout L(g);
  Dims xp_shape{g.batch, g.in_channels};
  for (const DimGeometry& d : g.spatial.dims) xp_shape.push_back(d.padded());
  Tensor dxp = Tensor::zeros(DType::kF64, xp_shape);
  RowMat& dcol = col_workspace(L.rows(), L.positions);  // never live with an im2col
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const RowMat& wg = aligned_copy(kLhs, w.data.data() + w_offset(L, grp), L.kpg, L.rows());
      const RowMat& dyg = aligned_copy(kRhs, dy.data.data() + y_offset(g, L, n, grp), L.kpg, L.positions);
      dcol.noalias() = wg.transpose() * dyg;
      col2im_add(L, dcol, dxp.data.data() + xp_offset(g, L, n, grp));
    }
  }
  return pad_adjoint(dxp, g.spatial, g.mode);
}

Tensor conv_backward_weight(const ConvGeometry& g, const Tensor& x, const Tensor& dy) {
  KC_INVARIANT(x.shape == g.x_shape() && dy.shape == g.y_shape());
  const Layout L(g);
  const Tensor xp = pad(x, g.spatial, g.mode);
  Tensor dw = Tensor::zeros(DType::kF64, g.w_shape());
  RowMat& col = col_workspace(L.rows(), L.positions);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      im2col(L, xp.data.data() + xp_offset(g, L, n, grp), col);
      const RowMat& dyg = aligned_copy(kLhs, dy.data.data() + y_offset(g, L, n, grp), L.kpg, L.positions);
      RowMat& out = workspace(kOut, L.kpg, L.rows());
      out.noalias() = dyg * col.transpose();
      MapMat dwg(dw.data.data() + w_offset(L, grp), L.kpg, L.rows());
      dwg += out;
    }
  }
  return dw;
}

Tensor conv_backward_bias(const ConvGeometry& g, const Tensor& dy) {
  KC_INVARIANT(dy.shape == g.y_shape());
  Tensor db = Tensor::zeros(DType::kF64, g.b_shape());
  const int64_t P = g.spatial.out_count();
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t co = 0; co < g.out_channels; ++co) {
      const double* row = dy.data.data() + (n * g.out_channels + co) * P;
      for (int64_t p = 0; p < P; ++p) db[co] += row[p];
    }
  }
  return db;
}

ConvGrads conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& dy) {
  ConvGrads r{conv_backward_data(g, dy, w), conv_backward_weight(g, x, dy), Tensor{}};
  if (g.bias) r.db = conv_backward_bias(g, dy);
  return r;
}

}  // namespace kc::ref
