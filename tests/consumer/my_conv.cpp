// The user's kernel (see my_conv.h): direct loops, f32 accumulation.
#include "my_conv.h"

#include <algorithm>
#include <numeric>

namespace my {
namespace {

// Calls f(oh, ow, r, s, ih, iw) for every tap of every output that reads the input
// (taps in the zero padding contribute nothing).
template <class F>
void for_each_tap(const Conv2d& p, F f) {
  for (int oh = 0; oh < p.out_h; ++oh) {
    for (int ow = 0; ow < p.out_w; ++ow) {
      for (int r = 0; r < p.r; ++r) {
        for (int s = 0; s < p.s; ++s) {
          const int ih = oh * p.stride_h + r * p.dil_h - p.pad_h, iw = ow * p.stride_w + s * p.dil_w - p.pad_w;
          if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) f(oh, ow, r, s, ih, iw);
        }
      }
    }
  }
}

}  // namespace

void conv2d_forward(const Conv2d& p, const float* x, const float* w, const float* b, float* y) {
  const int out = p.out_h * p.out_w;
  for (int n = 0; n < p.n; ++n) {
    for (int k = 0; k < p.k; ++k) {
      float* yp = y + (n * p.k + k) * out;
      std::fill(yp, yp + out, b ? b[k] : 0.0f);
      for (int c = 0; c < p.c; ++c) {
        const float* xp = x + (n * p.c + c) * p.h * p.w;
        const float* wp = w + (k * p.c + c) * p.r * p.s;
        for_each_tap(p, [&](int oh, int ow, int r, int s, int ih, int iw) {
          yp[oh * p.out_w + ow] += wp[r * p.s + s] * xp[ih * p.w + iw];
        });
      }
    }
  }
}

void conv2d_backward(const Conv2d& p, const float* x, const float* w, const float* dy, float* dx, float* dw,
                     float* db) {
  const int out = p.out_h * p.out_w;
  std::fill(dx, dx + p.n * p.c * p.h * p.w, 0.0f);
  std::fill(dw, dw + p.k * p.c * p.r * p.s, 0.0f);
  if (db) std::fill(db, db + p.k, 0.0f);
  for (int n = 0; n < p.n; ++n) {
    for (int k = 0; k < p.k; ++k) {
      const float* dyp = dy + (n * p.k + k) * out;
      if (db) db[k] += std::accumulate(dyp, dyp + out, 0.0f);
      for (int c = 0; c < p.c; ++c) {
        const float* xp = x + (n * p.c + c) * p.h * p.w;
        float* dxp = dx + (n * p.c + c) * p.h * p.w;
        const float* wp = w + (k * p.c + c) * p.r * p.s;
        float* dwp = dw + (k * p.c + c) * p.r * p.s;
        for_each_tap(p, [&](int oh, int ow, int r, int s, int ih, int iw) {
          const float g = dyp[oh * p.out_w + ow];
          dxp[ih * p.w + iw] += g * wp[r * p.s + s];
          dwp[r * p.s + s] += g * xp[ih * p.w + iw];
        });
      }
    }
  }
}

}  // namespace my
