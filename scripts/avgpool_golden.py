#!/usr/bin/env python3
# Writes cases/avgpool/golden_avgpool.yaml: hand-picked average-pooling cases with their
# expected y and dx, computed here in exact rational arithmetic (fractions.Fraction)
# from PyTorch's avg_pool1d/2d/3d definition, independently of reference/ (no numpy, no
# C++). Regenerate with
#   python3 scripts/avgpool_golden.py > cases/avgpool/golden_avgpool.yaml
#
# The definition (PyTorch's AvgPool kernels, with [lo, hi] padding per dim):
#   out = floor((in + lo + hi - k) / s) + 1, or with ceil_mode ceil(...) + 1, less one
#         when the last window would start at or past in + lo
#   window o along a dim: start = o*s - lo, end = min(start + k, in + hi)
#     (the ceil-mode overhang past the padding is cut off here)
#   pool_size = product over dims of (end - start)
#   clipped to the input: [max(start, 0), min(end, in))
#   divisor = divisor_override if given, else pool_size with count_include_pad,
#             else the product of the clipped extents
#   y[o] = sum of x over the clipped window / divisor
#   dx[i] = sum over the windows o holding i of dy[o] / divisor(o)
# Every value is checked to be a dyadic rational that the case's dtype holds exactly, so
# the expected tensors are exact in that dtype whatever order a kernel sums in.
import itertools
import math
import sys
from fractions import Fraction


def out_extent(n, k, s, lo, hi, ceil_mode):
    span = n + lo + hi - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + lo:
        out -= 1
    return out


def windows(n, k, s, lo, hi, ceil_mode):
    """(clipped start, clipped end, pool_size) of every window along one dim."""
    res = []
    for o in range(out_extent(n, k, s, lo, hi, ceil_mode)):
        start = o * s - lo
        end = min(start + k, n + hi)
        res.append((max(start, 0), min(end, n), end - start))
    return res


def avgpool(shape, x, dy, kernel, stride, pads, ceil_mode, count_include_pad, divisor):
    """shape = [N, C, spatial...]; x, dy flat row-major lists. Returns (y_shape, y, dx)."""
    batch, channels, spatial = shape[0], shape[1], shape[2:]
    per_dim = [windows(n, k, s, lo, hi, ceil_mode) for n, k, s, (lo, hi) in zip(spatial, kernel, stride, pads)]
    out_dims = [len(w) for w in per_dim]
    in_count, out_count = math.prod(spatial), math.prod(out_dims)

    def flat(idx, dims):
        f = 0
        for i, d in zip(idx, dims):
            f = f * d + i
        return f

    y = []
    dx = [Fraction(0)] * (batch * channels * in_count)
    for plane in range(batch * channels):
        for oidx in itertools.product(*[range(n) for n in out_dims]):
            wins = [per_dim[a][o] for a, o in enumerate(oidx)]
            ranges = [range(lo, hi) for lo, hi, _ in wins]
            if divisor:
                div = divisor
            elif count_include_pad:
                div = math.prod(size for _, _, size in wins)
            else:
                div = math.prod(len(r) for r in ranges)
            assert div > 0, "a window that covers no input with count_include_pad false"
            taps = [plane * in_count + flat(i, spatial) for i in itertools.product(*ranges)]
            y.append(sum((Fraction(x[t]) for t in taps), Fraction(0)) / div)
            share = Fraction(dy[plane * out_count + flat(oidx, out_dims)]) / div
            for t in taps:
                dx[t] += share
    return [batch, channels] + out_dims, y, dx


MANTISSA_BITS = {"f64": 53, "f32": 24, "f16": 11, "bf16": 8}


def text(v, dtype):
    """v as YAML, after checking that the dtype holds it exactly."""
    den = v.denominator
    assert den & (den - 1) == 0, f"{v} is not dyadic"
    if v != 0:
        num = abs(v.numerator)
        bits = num.bit_length() - (len(bin(num)) - len(bin(num).rstrip("0")))  # significant bits
        assert bits <= MANTISSA_BITS[dtype], f"{v} needs {bits} bits, more than {dtype} has"
    return str(int(v)) if den == 1 else repr(float(v))


def tensor(shape, data, dtype):
    return "{shape: " + str(list(shape)) + ", data: [" + ", ".join(text(Fraction(d), dtype) for d in data) + "]}"


CASES = [
    {
        "name": "golden avgpool1d k3 s2 pad 1 ceil_mode on 6, the last window overhangs the padding",
        "comment": [
            "windows [-1,2) [1,4) [3,6) [5,8); the last is cut at in + hi = 7, so its",
            "divisor is 2 (one input element and one padded), not 3",
        ],
        "dtype": "f32",
        "shape": [1, 2, 6],
        "avgpool": "{kernel: 3, stride: 2, padding: 1, ceil_mode: true}",
        "kernel": [3], "stride": [2], "pads": [(1, 1)], "ceil_mode": True, "count_include_pad": True, "divisor": None,
        "x": [6 * v for v in [4, 2, 5, -1, 7, 6, -3, 1, 0, 2, -5, 8]],
        "dy": [6 * v for v in [1, -2, 3, 1, 2, 1, -1, 4]],
    },
    {
        "name": "golden avgpool2d count_include_pad false, asymmetric padding [[1, 0], [0, 2]], k [2, 3] s 2",
        "comment": [
            "rows: windows [-1,1) [1,3) [3,5) hold 1, 2, 2 input rows; columns: [0,3) [2,5)",
            "[4,7) hold 3, 3, 2 input columns (in 6, pad hi 2): divisors are the input counts",
        ],
        "dtype": "f32",
        "shape": [2, 1, 5, 6],
        "avgpool": "{kernel: [2, 3], stride: 2, padding: [[1, 0], [0, 2]], count_include_pad: false}",
        "kernel": [2, 3], "stride": [2, 2], "pads": [(1, 0), (0, 2)], "ceil_mode": False,
        "count_include_pad": False, "divisor": None,
        "x": [12 * v for v in [3, -1, 4, 1, -5, 9, 2, 6, -5, 3, 5, -8, 9, 7, 9, -3, 2, 3, 8, -4, 6, 2, 6, 4, -3, 3,
                               8, 3, 2, 7,
                               -1, 0, 2, 8, 8, -4, 1, 9, 7, 1, 6, 9, 3, 9, -9, 3, 7, 5, 1, 0, 5, 8, 2, 0, 9, 7, 4,
                               -9, 4, 4]],
        "dy": [12 * v for v in [1, 2, -1, 3, 0, 2, -2, 1, 4, 2, -3, 1, 1, 1, 2, -1, 3, 2]],
    },
    {
        "name": "golden avgpool3d divisor 4, k2 s2 pad 1 on 2x3x3 in f16",
        "comment": [
            "every window divides by the given 4, whatever it covers (corner windows hold",
            "one input element, so their y is that element / 4)",
        ],
        "dtype": "f16",
        "shape": [1, 1, 2, 3, 3],
        "avgpool": "{kernel: 2, stride: 2, padding: 1, divisor: 4}",
        "kernel": [2, 2, 2], "stride": [2, 2, 2], "pads": [(1, 1)] * 3, "ceil_mode": False,
        "count_include_pad": True, "divisor": 4,
        "x": [5, -3, 2, 7, 1, -6, 4, 9, -2, 3, 8, -1, -4, 6, 2, 1, -7, 5],
        "dy": [1, -2, 3, 5, -1, 2, 6, -3],
    },
    {
        "name": "golden avgpool2d padding 2 over k2 s2 in bf16, windows only in padding give 0",
        "comment": [
            "rows: windows [-2,0) [0,2) [2,4) on in 3 (the last holds row 2 and a pad row);",
            "columns: [-2,0) [0,2) [2,4) [4,6) on in 4. count_include_pad: every divisor is 4,",
            "and the windows in row 0, column 0 and column 3 hold no input: y = 0, no dx",
        ],
        "dtype": "bf16",
        "shape": [1, 2, 3, 4],
        "avgpool": "{kernel: 2, stride: 2, padding: 2, count_include_pad: true}",
        "kernel": [2, 2], "stride": [2, 2], "pads": [(2, 2), (2, 2)], "ceil_mode": False,
        "count_include_pad": True, "divisor": None,
        "x": [3, -1, 4, 1, 5, 9, -2, 6, 5, 3, -5, 8, 9, 7, -9, 3, 2, 3, 8, 4, -6, 2, 6, 4],
        "dy": [1, 2, 3, -4, 5, 6, -7, 8, 9, 1, 2, 3, 3, -1, 2, 5, 4, 1, -2, 6, 1, 7, 3, 2],
    },
]


def main():
    w = sys.stdout.write
    w("# Golden average pooling: expected y and dx written by scripts/avgpool_golden.py (exact\n")
    w("# rational arithmetic from PyTorch's definition, independent of reference/). Do not edit\n")
    w("# by hand: change the script and regenerate.\n")
    w("defaults:\n  op: avgpool\ncases:\n")
    for c in CASES:
        shape, y, dx = avgpool(c["shape"], c["x"], c["dy"], c["kernel"], c["stride"], c["pads"], c["ceil_mode"],
                               c["count_include_pad"], c["divisor"])
        assert len(c["x"]) == math.prod(c["shape"]) and len(c["dy"]) == math.prod(shape), c["name"]
        dt = c["dtype"]
        w(f"  - name: {c['name']}\n")
        for line in c["comment"]:
            w(f"    # {line}\n")
        w(f"    dtype: {dt}\n")
        w(f"    input: {{batch: {c['shape'][0]}, channels: {c['shape'][1]}, spatial: {c['shape'][2:]}}}\n")
        w(f"    avgpool: {c['avgpool']}\n")
        w("    tensors:\n")
        w(f"      x: {tensor(c['shape'], c['x'], dt)}\n")
        w(f"      dy: {tensor(shape, c['dy'], dt)}\n")
        w("    expected:\n")
        w(f"      y: {tensor(shape, y, dt)}\n")
        w(f"      dx: {tensor(c['shape'], dx, dt)}\n")


if __name__ == "__main__":
    main()
