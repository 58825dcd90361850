// The user's kernel under test: a float conv2d (NCHW, one group, zero padding) with its
// backward, as a project would write it, knowing nothing of kernelcheck.
#pragma once

namespace my {

struct Conv2d {
  int n, c, h, w;          // input
  int k, r, s;             // output channels, kernel height and width
  int stride_h, stride_w;  // strides
  int dil_h, dil_w;        // dilations
  int pad_h, pad_w;        // padding before the first row / column (after: implied by out)
  int out_h, out_w;        // output extents
};

// y[n, k, oh, ow] = b[k] + sum w[k, c, r, s] * x[n, c, oh*sh + r*dh - ph, ow*sw + s*dw - pw]
// (b may be null).
void conv2d_forward(const Conv2d& p, const float* x, const float* w, const float* b, float* y);
// dx, dw and (when db is not null) db for the cotangent dy.
void conv2d_backward(const Conv2d& p, const float* x, const float* w, const float* dy, float* dx, float* dw, float* db);

}  // namespace my
