"""The consumer's kernel written in Python: a 2-D f32 convolution forward in numpy, one
group, zero padding, as `my.py.conv2d` (kcheck run --python my_kernels.py). Its cases run
through kc_add_case_tests(PYTHON ...); the checks that need a backward are SKIPPED (the
module has none), the forward ones judge it."""
import numpy as np


class MyPyConv2d:
    name = "my.py.conv2d"

    def supports(self, case):
        if case.op != "conv" or case.dtype != "f32" or case.rank != 2:
            return "my.py.conv2d runs f32 2-D conv"
        if case.groups != 1 or case.padding_mode != "zeros":
            return "one group, zero padding only"
        return None

    def conv_forward(self, p, x, w, b):
        (top, bottom), (left, right) = p.padding
        xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
        w = np.asarray(w, np.float64)
        _, _, oh, ow = p.y_shape
        (sh, sw), (dh, dw) = p.stride, p.dilation
        y = np.zeros(p.y_shape)
        for i in range(p.kernel[0]):
            for j in range(p.kernel[1]):
                patch = xp[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh, j * dw: j * dw + sw * (ow - 1) + 1: sw]
                y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
        if b is not None:
            y += np.asarray(b, np.float64)[None, :, None, None]
        return y.astype(np.float32)


def kc_backends():
    return [MyPyConv2d]
