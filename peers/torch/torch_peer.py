"""PyTorch as a peer: `torch` (CPU) and `torch.cuda`, through torch.nn.functional and autograd.

Run: kcheck run cases --python peers/torch/torch_peer.py --waivers peers/torch/waivers.yaml
(docs/python.md, "The PyTorch peer"). Every forward is the functional op a PyTorch model
calls (conv1d/2d/3d, max_pool with return_indices, avg_pool); every backward is autograd's
(`Tensor.backward`), except max pool's, whose interface gives dy and the indices but no x:
it calls the op autograd records for max pool's backward
(`max_pool{2,3}d_with_indices_backward`), which reads x for its shape only.
Without torch (or numpy) the module still imports: both backends are unavailable, the
reason naming the missing package. A configuration torch's API cannot express (padding
over half a pool window, asymmetric pool padding, tie: last, a wider accumulation than
torch's) is SKIPPED with the reason; a dtype, rank or padding mode a torch build lacks is
found by trying it once. 1-D average pooling runs as 2-D (avg_pool1d has no divisor).
"""
import warnings

try:
    import numpy as np
    import torch
    import torch.nn.functional as F

    _MISSING = None
except ImportError as error:  # the backends say so in available()
    _MISSING = "%s (apt-get install python3-torch python3-numpy)" % error

if _MISSING is None:
    _DTYPES = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    _CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    _MAXPOOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
    _AVGPOOL = {2: F.avg_pool2d, 3: F.avg_pool3d}  # 1-D runs as 2-D (avg_pool1d has no divisor)
    _PAD_MODES = {"reflect": "reflect", "replicate": "replicate", "circular": "circular"}


def _pad_list(p):
    """F.pad's order: the last dim's (lo, hi) first."""
    out = []
    for lo, hi in reversed(p.padding):
        out += [lo, hi]
    return out


def _symmetric(p):
    return all(lo == hi for lo, hi in p.padding)


class TorchCpu:
    name = "torch"
    device = "cpu"
    # relu's backward is threshold_backward: dy passes where the pre-activation is NaN.
    numerics = {"relu_nan_grad": "pass_dy"}

    def available(self):
        if _MISSING is not None:
            return _MISSING
        return None

    # -- what runs ---------------------------------------------------------------------
    def supports(self, case):
        own = _ACCUMULATION.get(case.dtype)
        if _WIDTH.get(case.accumulation, 0) > _WIDTH.get(own, 0):  # a narrower one asks less than torch gives
            return "torch sums %s in %s, not %s" % (case.dtype, own, case.accumulation)
        if case.op in ("maxpool", "avgpool"):
            why = self._pool_form(case)
            if why:
                return why
        return _missing(self.device, case)

    def _pool_form(self, p):
        if not _symmetric(p):
            return "torch pools pad each dim symmetrically (padding %s is asymmetric)" % list(p.padding)
        if any(2 * lo > k for (lo, _), k in zip(p.padding, p.kernel)):
            return "torch pools pad at most half the window (padding %s, kernel %s)" % (
                [lo for lo, _ in p.padding], list(p.kernel))
        if p.op == "maxpool" and p.tie == "last":
            return "torch's max pool keeps the first maximum of a window: it runs tie: first and any"
        return None

    # -- arrays in and out -------------------------------------------------------------
    def _tensor(self, a, dtype, grad=False):
        """A case array as a tensor on the device (a copy: the inputs are read-only)."""
        if a is None:
            return None
        host = np.array(a, copy=True)
        t = torch.from_numpy(host.view(np.int16)).view(torch.bfloat16) if dtype == "bf16" else torch.from_numpy(host)
        t = t.to(self.device)
        return t.requires_grad_() if grad else t

    def _out(self, t, dtype):
        t = t.detach().contiguous().cpu()
        if dtype == "bf16":
            return t.view(torch.int16).numpy().view(np.uint16)
        return t.numpy()

    # -- convolution -------------------------------------------------------------------
    def _conv(self, p, x, w, b):
        if p.padding_mode != "zeros":
            x = F.pad(x, _pad_list(p), mode=_PAD_MODES[p.padding_mode])
            padding = 0
        elif _symmetric(p):
            padding = [lo for lo, _ in p.padding]
        else:
            x = F.pad(x, _pad_list(p))  # torch's conv pads symmetrically only
            padding = 0
        y = _CONV[p.rank](x, w, b, stride=list(p.stride), padding=padding, dilation=list(p.dilation),
                          groups=p.groups)
        return F.relu(y) if p.relu else y

    def conv_forward(self, p, x, w, b):
        with torch.no_grad():
            y = self._conv(p, self._tensor(x, p.dtype), self._tensor(w, p.dtype), self._tensor(b, p.dtype))
        return self._out(y, p.dtype)

    def conv_backward(self, p, x, w, b, dy):
        xt, wt = self._tensor(x, p.dtype, True), self._tensor(w, p.dtype, True)
        bt = self._tensor(b, p.dtype, True)
        self._conv(p, xt, wt, bt).backward(self._tensor(dy, p.dtype))
        db = None if bt is None else self._out(bt.grad, p.dtype)
        return self._out(xt.grad, p.dtype), self._out(wt.grad, p.dtype), db

    # -- max pooling -------------------------------------------------------------------
    def _maxpool_args(self, p):
        return dict(kernel_size=list(p.kernel), stride=list(p.stride), padding=[lo for lo, _ in p.padding],
                    dilation=list(p.dilation), ceil_mode=bool(p.ceil_mode))

    def maxpool_forward(self, p, x):
        with torch.no_grad():
            y, index = _MAXPOOL[p.rank](self._tensor(x, p.dtype), return_indices=True, **self._maxpool_args(p))
        y = self._out(y, p.dtype)
        return (y, index.cpu().numpy().astype(np.int64)) if p.training else y

    def maxpool_backward(self, p, dy, indices):
        dyt = self._tensor(dy, p.dtype)
        index = self._tensor(indices, "i64")
        a = self._maxpool_args(p)
        args = [a["kernel_size"], a["stride"], a["padding"], a["dilation"], a["ceil_mode"]]
        x = torch.zeros(p.x_shape, dtype=dyt.dtype, device=self.device)  # read for its shape only
        if p.rank == 1:  # max_pool1d's autograd runs through the 2-D op
            args = [[one] + v for one, v in zip((1, 1, 0, 1), args[:4])] + [args[4]]
            dx = torch.ops.aten.max_pool2d_with_indices_backward(dyt.unsqueeze(2), x.unsqueeze(2), *args,
                                                                 index.unsqueeze(2)).squeeze(2)
        else:
            op = {2: torch.ops.aten.max_pool2d_with_indices_backward,
                  3: torch.ops.aten.max_pool3d_with_indices_backward}[p.rank]
            dx = op(dyt, x, *args, index)
        return self._out(dx, p.dtype)

    # -- average pooling ---------------------------------------------------------------
    def _avgpool(self, p, x):
        one_d = p.rank == 1
        if one_d:
            x = x.unsqueeze(2)
        pre = [1] if one_d else []
        y = _AVGPOOL[2 if one_d else p.rank](
            x, kernel_size=pre + list(p.kernel), stride=pre + list(p.stride),
            padding=[0] * len(pre) + [lo for lo, _ in p.padding], ceil_mode=bool(p.ceil_mode),
            count_include_pad=bool(p.count_include_pad), divisor_override=p.divisor or None)
        return y.squeeze(2) if one_d else y

    def avgpool_forward(self, p, x):
        with torch.no_grad():
            y = self._avgpool(p, self._tensor(x, p.dtype))
        return self._out(y, p.dtype)

    def avgpool_backward(self, p, dy):
        # An average pool's gradient does not depend on x: autograd through zeros.
        x = torch.zeros(p.x_shape, dtype=_DTYPES[p.dtype], device=self.device, requires_grad=True)
        self._avgpool(p, x).backward(self._tensor(dy, p.dtype))
        return self._out(x.grad, p.dtype)


class TorchCuda(TorchCpu):
    name = "torch.cuda"
    device = "cuda"

    def __init__(self):
        # Set where the ops run (a worker makes the instance; available() runs in the
        # probe only). The contract's f32 is f32: no TF32 tensor-core rounding; and cuDNN's
        # deterministic algorithms (the determinism check reruns every pass).
        if _MISSING is None:
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False

    def available(self):
        if _MISSING is not None:
            return _MISSING
        if not torch.backends.cuda.is_built():
            return "torch %s was built without CUDA" % torch.__version__
        if not torch.cuda.is_available():
            return "torch %s finds no CUDA device" % torch.__version__
        return None


_TRIED = {}
_ACCUMULATION = {"f64": "f64", "f32": "f32", "f16": "f32", "bf16": "f32"}  # what torch's kernels sum in
_WIDTH = {"bf16": 1, "f16": 1, "f32": 2, "f64": 3}


def _missing(device, case):
    """Why this torch cannot run the case's op, dtype, rank and padding mode on `device`, or
    None: found by running the same configuration once at a tiny size (torch 1.13's CPU
    kernels have no f16, and no bf16 for max_pool3d or replication padding)."""
    if case.dtype not in _DTYPES:
        return "torch has no " + case.dtype
    if case.op == "stack":
        return None
    mode = getattr(case, "padding_mode", "zeros")
    key = (device, case.op, case.dtype, case.rank, mode)
    if key not in _TRIED:
        _TRIED[key] = _try(device, case.op, _DTYPES[case.dtype], case.rank, mode)
    return _TRIED[key]


def _try(device, op, dtype, rank, mode):
    x = torch.ones([1, 1] + [4] * rank, dtype=dtype, device=device, requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if op in ("conv", "conv_bias_relu"):
                xp = x if mode == "zeros" else F.pad(x, [1, 1] * rank, mode=_PAD_MODES[mode])
                y = _CONV[rank](xp, torch.ones([1, 1] + [2] * rank, dtype=dtype, device=device))
            elif op == "maxpool":
                y = _MAXPOOL[rank](x, 2, return_indices=True)[0]
            else:
                y = _AVGPOOL[max(rank, 2)](x if rank > 1 else x.unsqueeze(2), 2 if rank > 1 else [1, 2])
            y.sum().backward()
    except RuntimeError as error:
        return "torch %s on %s: %s" % (torch.__version__, device, str(error).splitlines()[0])
    return None


def kc_backends():
    return [TorchCpu, TorchCuda]
