"""A convolution and a max pool written with numpy alone, as kcheck backends.

Run: kcheck run cases --python examples/python/numpy_kernels.py --backend numpy.conv
(docs/python.md). numpy.conv.one_sample_dw carries a planted bug the corpus must catch. The conv handles groups, stride, dilation and zero padding of any
rank, the fused bias + relu, and its backward; the max pool keeps its argmax (the flat
index into each (sample, channel) input plane) and routes dy through it. Both compute
in float64 and round once to the case's dtype, as the contract's reference does.
"""
import itertools

import numpy as np

np.seterr(all="ignore")  # overflow and inf - inf are what the special-value cases are about

_DTYPES = {"f64": np.float64, "f32": np.float32, "f16": np.float16}


def _windows(p):
    """Every output position with the input index each tap reads (or -1 where it is padding)."""
    ins = p.x_shape[2:]
    outs = p.y_shape[2:]
    taps = []
    for o in itertools.product(*[range(n) for n in outs]):
        row = []
        for k in itertools.product(*[range(n) for n in p.kernel]):
            at = [o[d] * p.stride[d] - p.padding[d][0] + k[d] * p.dilation[d] for d in range(p.rank)]
            inside = all(0 <= at[d] < ins[d] for d in range(p.rank))
            row.append(np.ravel_multi_index(at, ins) if inside else -1)
        taps.append(row)
    return np.array(taps, dtype=np.int64).reshape(len(taps), -1)


def _columns(p, x):
    """x as [N, C, out positions, taps], zero where a tap reads padding."""
    taps = _windows(p)
    flat = x.reshape(x.shape[0], x.shape[1], -1)
    cols = flat[:, :, np.maximum(taps, 0)]
    cols[:, :, taps < 0] = 0.0
    return cols, taps


class NumpyConv:
    name = "numpy.conv"
    numerics = {"accumulation": "f64"}

    def supports(self, case):
        if case.op not in ("conv", "conv_bias_relu", "maxpool"):
            return "numpy.conv runs conv, conv_bias_relu and maxpool"
        if case.dtype not in _DTYPES:
            return "numpy has no " + case.dtype
        if case.op != "maxpool" and case.padding_mode != "zeros":
            return "only zero padding"
        return None

    def _forward_z(self, p, x, w, b):
        x = np.asarray(x, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        cols, _ = _columns(p, x)  # [N, Cin, P, T]
        g, cin, cout = p.groups, p.in_channels // p.groups, p.out_channels // p.groups
        n, positions = x.shape[0], cols.shape[2]
        cols = cols.reshape(n, g, cin, positions, -1)
        wg = w.reshape(g, cout, cin, -1)
        z = np.einsum("ngcpt,gkct->ngkp", cols, wg).reshape(n, p.out_channels, positions)
        if b is not None:
            z += np.asarray(b, dtype=np.float64)[None, :, None]
        return z.reshape(p.y_shape)

    def conv_forward(self, p, x, w, b):
        z = self._forward_z(p, x, w, b)
        if p.relu:
            z = np.where((z > 0) | np.isnan(z), z, 0.0)  # NaN stays NaN through relu
        return z.astype(_DTYPES[p.dtype])

    def conv_backward(self, p, x, w, b, dy):
        dz = np.asarray(dy, dtype=np.float64).reshape(p.y_shape[0], p.out_channels, -1)
        if p.relu:
            z = self._forward_z(p, x, w, b).reshape(dz.shape)
            dz = np.where(z > 0, dz, 0.0)
        xf = np.asarray(x, dtype=np.float64)
        cols, taps = _columns(p, xf)
        g, cin, cout = p.groups, p.in_channels // p.groups, p.out_channels // p.groups
        n, positions = xf.shape[0], cols.shape[2]
        cols = cols.reshape(n, g, cin, positions, -1)
        dzg = dz.reshape(n, g, cout, positions)
        wg = np.asarray(w, dtype=np.float64).reshape(g, cout, cin, -1)
        dw = np.einsum("ngkp,ngcpt->gkct", dzg, cols).reshape(p.w_shape)
        dcols = np.einsum("ngkp,gkct->ngcpt", dzg, wg).reshape(n, p.in_channels, positions, -1)
        dx = np.zeros((n, p.in_channels, int(np.prod(p.x_shape[2:]))))
        inside = taps >= 0
        for t in range(taps.shape[1]):
            rows = np.nonzero(inside[:, t])[0]
            np.add.at(dx, (slice(None), slice(None), taps[rows, t]), dcols[:, :, rows, t])
        db = dz.sum(axis=(0, 2)) if p.bias else None
        out = _DTYPES[p.dtype]
        return dx.reshape(p.x_shape).astype(out), dw.astype(out), None if db is None else db.astype(out)

    def maxpool_forward(self, p, x):
        x = np.asarray(x, dtype=np.float64)
        cols, taps = _columns(p, x)
        valid = np.broadcast_to(taps >= 0, cols.shape)  # padding never wins, even over -inf
        nan = np.isnan(cols) & valid  # a NaN in the window wins
        best = np.where(valid & ~nan, cols, -np.inf).max(axis=3, keepdims=True)
        hit = np.where(nan.any(axis=3, keepdims=True), nan, valid & (cols == best))
        if p.tie == "last":
            last = hit.shape[3] - 1 - hit[..., ::-1].argmax(axis=3)
            pick = last
        else:
            pick = hit.argmax(axis=3)
        y = np.take_along_axis(cols, pick[..., None], axis=3)[..., 0]
        index = np.take_along_axis(np.broadcast_to(taps, cols.shape), pick[..., None], axis=3)[..., 0]
        y = y.reshape(p.y_shape).astype(_DTYPES[p.dtype])
        return (y, index.reshape(p.y_shape).astype(np.int64)) if p.training else y

    def maxpool_backward(self, p, dy, indices):
        dy = np.asarray(dy, dtype=np.float64).reshape(p.y_shape[0], p.y_shape[1], -1)
        idx = np.asarray(indices).reshape(dy.shape)
        dx = np.zeros((p.x_shape[0], p.x_shape[1], int(np.prod(p.x_shape[2:]))))
        for n in range(dx.shape[0]):
            for c in range(dx.shape[1]):
                np.add.at(dx[n, c], idx[n, c], dy[n, c])
        return dx.reshape(p.x_shape).astype(_DTYPES[p.dtype])


class NumpyConvOneSampleDw(NumpyConv):
    """A planted bug: dw sums over sample 0 alone, as a weight gradient not summed over
    the batch would. The corpus catches it (weight_share, backward); it must never pass."""

    name = "numpy.conv.one_sample_dw"

    def conv_backward(self, p, x, w, b, dy):
        dx, _, db = super().conv_backward(p, x, w, b, dy)
        one = np.asarray(x)[:1]
        q = _one_sample(p)
        _, dw, _ = super().conv_backward(q, one, w, b, np.asarray(dy)[:1])
        return dx, dw, db


def _one_sample(p):
    """p for a batch of one."""
    import types

    q = types.SimpleNamespace(**vars(p))
    q.x_shape = [1] + list(p.x_shape[1:])
    q.y_shape = [1] + list(p.y_shape[1:])
    q.batch = 1
    return q


def kc_backends():
    return [NumpyConv, NumpyConvOneSampleDw]
