"""PyTorch custom operators (torch.library) around numpy_kernels.py, and kcheck backends
that call them through torch.ops as a model would (docs/python.md, "A torch.library operator").

Importing it defines kc_examples::conv, conv_backward, max_pool and max_pool_backward,
whose CPU kernels are the numpy ones; conv and max_pool also get an Autograd kernel, so a
model calling them has gradients from .backward() (run this file to compare them with
torch's). torch_library.conv.no_padding carries a planted bug the corpus must catch.
"""
import importlib.util
import os
import types

import numpy as np
import torch
import torch.nn.functional as F


def _load_numpy_kernels():
    """numpy_kernels.py from this file's folder, whatever sys.path holds."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_kernels.py")
    spec = importlib.util.spec_from_file_location("numpy_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_nk = _load_numpy_kernels()
_DTYPE_NAMES = {torch.float64: "f64", torch.float32: "f32", torch.float16: "f16"}
_SCHEMAS = {
    "conv": "conv(Tensor x, Tensor w, Tensor? b, int[] stride, int[] padding_lo, int[] padding_hi, "
            "int[] dilation, int groups=1, bool relu=False) -> Tensor",
    # db is dy summed per channel, returned with or without a bias: a schema's outputs are all Tensors.
    "conv_backward": "conv_backward(Tensor dy, Tensor x, Tensor w, Tensor? b, int[] stride, int[] padding_lo, "
                     "int[] padding_hi, int[] dilation, int groups=1, bool relu=False) -> (Tensor, Tensor, Tensor)",
    # indices: the flat position in each (sample, channel) input plane, as torch's max pool gives.
    "max_pool": "max_pool(Tensor x, int[] kernel, int[] stride, int[] padding_lo, int[] padding_hi, "
                "int[] dilation, bool ceil_mode=False, str tie=\"first\") -> (Tensor, Tensor)",
    "max_pool_backward": "max_pool_backward(Tensor dy, Tensor indices, int[] x_size) -> Tensor",
}


# -- the operators' CPU kernels: parameters as the numpy kernels take them -----------------
def _dtype_name(t):
    if t.dtype not in _DTYPE_NAMES:
        raise TypeError("kc_examples: the numpy kernels have no %s" % t.dtype)
    return _DTYPE_NAMES[t.dtype]


def _geometry(x, kernel, stride, lo, hi, dilation):
    """The spatial fields both ops share; lists of one length per spatial dim, or an error."""
    rank = x.dim() - 2
    lists = (kernel, stride, lo, hi, dilation)
    if rank < 1 or any(len(v) != rank for v in lists):
        raise ValueError("kc_examples: x has %d spatial dims; kernel, stride, padding_lo, padding_hi and "
                         "dilation have %s entries" % (rank, [len(v) for v in lists]))
    return dict(rank=rank, dtype=_dtype_name(x), x_shape=list(x.shape), kernel=list(kernel),
                stride=list(stride), dilation=list(dilation), padding=list(zip(lo, hi)))


def _conv_params(x, w, b, stride, padding_lo, padding_hi, dilation, groups, relu):
    p = types.SimpleNamespace(**_geometry(x, w.shape[2:], stride, padding_lo, padding_hi, dilation))
    out = [(n + lo + hi - d * (k - 1) - 1) // s + 1
           for n, k, s, (lo, hi), d in zip(x.shape[2:], p.kernel, p.stride, p.padding, p.dilation)]
    if min(out) < 1:
        raise ValueError("kc_examples.conv: the output would be empty (%s)" % out)
    p.y_shape = [x.shape[0], w.shape[0]] + out
    p.w_shape = list(w.shape)
    p.batch, p.in_channels, p.out_channels = x.shape[0], x.shape[1], w.shape[0]
    p.groups, p.relu, p.bias = groups, relu, b is not None
    return p


def _pool_extent(n, k, s, lo, hi, d, ceil_mode):
    """docs/ops.md, "Max pooling": ceil_mode drops a last window starting at in + lo or past."""
    span = n + lo + hi - d * (k - 1) - 1
    if not ceil_mode:
        return span // s + 1
    out = -(-span // s) + 1
    return out - 1 if (out - 1) * s >= n + lo else out


def _numpy(t):
    return None if t is None else t.detach().numpy()


def _conv_cpu(x, w, b, stride, padding_lo, padding_hi, dilation, groups=1, relu=False):
    p = _conv_params(x, w, b, stride, padding_lo, padding_hi, dilation, groups, relu)
    return torch.from_numpy(_nk.NumpyConv().conv_forward(p, _numpy(x), _numpy(w), _numpy(b)))


def _conv_backward_cpu(dy, x, w, b, stride, padding_lo, padding_hi, dilation, groups=1, relu=False):
    p = _conv_params(x, w, b, stride, padding_lo, padding_hi, dilation, groups, relu)
    p.bias = True  # db whatever the bias: the schema returns three tensors
    grads = _nk.NumpyConv().conv_backward(p, _numpy(x), _numpy(w), _numpy(b), _numpy(dy))
    return tuple(torch.from_numpy(g) for g in grads)


def _max_pool_cpu(x, kernel, stride, padding_lo, padding_hi, dilation, ceil_mode=False, tie="first"):
    if tie not in ("first", "last", "any"):
        raise ValueError("kc_examples.max_pool: tie is first, last or any, not %r" % tie)
    p = types.SimpleNamespace(**_geometry(x, kernel, stride, padding_lo, padding_hi, dilation))
    out = [_pool_extent(n, k, s, lo, hi, d, ceil_mode)
           for n, k, s, (lo, hi), d in zip(x.shape[2:], p.kernel, p.stride, p.padding, p.dilation)]
    if min(out) < 1:
        raise ValueError("kc_examples.max_pool: the output would be empty (%s)" % out)
    p.y_shape, p.tie, p.training = list(x.shape[:2]) + out, tie, True
    y, indices = _nk.NumpyConv().maxpool_forward(p, _numpy(x))
    return torch.from_numpy(y), torch.from_numpy(indices)


def _max_pool_backward_cpu(dy, indices, x_size):
    p = types.SimpleNamespace(dtype=_dtype_name(dy), x_shape=list(x_size), y_shape=list(dy.shape))
    return torch.from_numpy(_nk.NumpyConv().maxpool_backward(p, _numpy(dy), _numpy(indices)))


# -- autograd: conv and max_pool differentiable where a model calls them -------------------
class _Conv(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, *args):
        ctx.save_for_backward(x, w, b)
        ctx.args = args
        return _conv_cpu(x, w, b, *args)

    @staticmethod
    def backward(ctx, dy):
        x, w, b = ctx.saved_tensors
        dx, dw, db = torch.ops.kc_examples.conv_backward(dy, x, w, b, *ctx.args)
        return (dx, dw, None if b is None else db) + (None,) * len(ctx.args)


class _MaxPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, *args):
        y, indices = _max_pool_cpu(x, *args)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.x_size, ctx.nargs = list(x.shape), len(args)
        return y, indices

    @staticmethod
    def backward(ctx, dy, _):
        (indices,) = ctx.saved_tensors
        dx = torch.ops.kc_examples.max_pool_backward(dy, indices, ctx.x_size)
        return (dx,) + (None,) * ctx.nargs


def _define():
    """Defines the ops once per process (a second import reuses them: a name is defined once)."""
    if hasattr(torch.ops.kc_examples, "conv"):
        return None
    lib = torch.library.Library("kc_examples", "DEF")
    for schema in _SCHEMAS.values():
        lib.define(schema)
    kernels = {"conv": _conv_cpu, "conv_backward": _conv_backward_cpu, "max_pool": _max_pool_cpu,
               "max_pool_backward": _max_pool_backward_cpu}
    for name, fn in kernels.items():
        lib.impl(name, fn, "CPU")
    # The Autograd kernels run the CPU ones themselves: torch 1.13 has no public way for a
    # Python kernel to redispatch below autograd.
    lib.impl("conv", lambda x, w, b, *args: _Conv.apply(x, w, b, *args), "Autograd")
    lib.impl("max_pool", lambda x, *args: _MaxPool.apply(x, *args), "Autograd")
    return lib  # kept: the registrations last as long as the Library object


_LIBRARY = _define()


# -- kcheck backends (docs/python.md): the operators called as a model calls them -----------
def _tensor(a, grad=False):
    """A case array as a tensor (a copy: the inputs are read-only, and torch wants writable memory)."""
    if a is None:
        return None
    t = torch.from_numpy(np.array(a, copy=True))
    return t.requires_grad_() if grad else t


def _conv_args(p, lo, hi):
    return [list(p.stride), lo, hi, list(p.dilation), p.groups, bool(p.relu)]


class TorchLibraryConv:
    name = "torch_library.conv"
    numerics = {"accumulation": "f64"}

    def supports(self, case):
        if case.op not in ("conv", "conv_bias_relu", "maxpool"):
            return self.name + " runs conv, conv_bias_relu and maxpool"
        return _nk.NumpyConv().supports(case)  # the kernels' own limits, with their reasons

    def _conv(self, p, x, w, b):
        lo, hi = [lo for lo, _ in p.padding], [hi for _, hi in p.padding]
        return torch.ops.kc_examples.conv(x, w, b, *_conv_args(p, lo, hi))

    def conv_forward(self, p, x, w, b):
        with torch.no_grad():
            return self._conv(p, _tensor(x), _tensor(w), _tensor(b)).numpy()

    def conv_backward(self, p, x, w, b, dy):
        # Through autograd, as a model's loss.backward() reaches kc_examples::conv_backward.
        xt, wt, bt = _tensor(x, True), _tensor(w, True), _tensor(b, True)
        self._conv(p, xt, wt, bt).backward(_tensor(dy))
        return xt.grad.numpy(), wt.grad.numpy(), None if bt is None else bt.grad.numpy()

    def maxpool_forward(self, p, x):
        y, indices = torch.ops.kc_examples.max_pool(
            _tensor(x), list(p.kernel), list(p.stride), [lo for lo, _ in p.padding], [hi for _, hi in p.padding],
            list(p.dilation), bool(p.ceil_mode), p.tie)
        return (y.numpy(), indices.numpy()) if p.training else y.numpy()

    def maxpool_backward(self, p, dy, indices):
        # kcheck hands dy and the indices, not x: the backward op itself, as autograd calls it.
        return torch.ops.kc_examples.max_pool_backward(_tensor(dy), _tensor(indices), list(p.x_shape)).numpy()


class TorchLibraryConvNoPadding(TorchLibraryConv):
    """A planted bug: "same" made by padding the output instead of the input. The conv runs
    with no padding and its output is zero-padded back to the size due, so every output
    whose window reaches into the padding is 0 and gets no gradient. The padding check
    names it ("all in windows that overlap the padding"); it must never pass."""

    name = "torch_library.conv.no_padding"

    def _conv(self, p, x, w, b):
        zeros = [0] * p.rank
        y = torch.ops.kc_examples.conv(x, w, b, *_conv_args(p, zeros, zeros))
        pads = []
        for (lo, _), s, got, due in zip(p.padding, p.stride, y.shape[2:], p.y_shape[2:]):
            first = -(-lo // s)  # the outputs before the first window inside the input
            pads = [first, due - got - first] + pads  # F.pad's order: the last dim first
        return F.pad(y, pads)


def kc_backends():
    return [TorchLibraryConv, TorchLibraryConvNoPadding]


def _demo():
    """A conv, relu and max pool in a model: the ops' gradients against torch's own."""
    x = torch.randn(2, 3, 8, 8, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, dtype=torch.float64, requires_grad=True)
    y = torch.ops.kc_examples.conv(x, w, None, [1, 1], [1, 1], [1, 1], [1, 1], 1, True)
    pooled, _ = torch.ops.kc_examples.max_pool(y, [2, 2], [2, 2], [0, 0], [0, 0], [1, 1])
    pooled.sum().backward()
    x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
    F.max_pool2d(F.relu(F.conv2d(x2, w2, padding=1)), 2).sum().backward()
    print("max |dx - torch's dx| =", (x.grad - x2.grad).abs().max().item())
    print("max |dw - torch's dw| =", (w.grad - w2.grad).abs().max().item())


if __name__ == "__main__":
    _demo()
