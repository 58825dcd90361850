"""Python backends that each misbehave one way, for tests/python/python_backends.cmake."""
import os

import numpy as np


class Raises:
    name = "py.raises"

    def conv_forward(self, p, x, w, b):
        raise ValueError("planted in conv_forward")


class NoOps:
    name = "py.no_ops"


class WrongShape:
    name = "py.wrong_shape"

    def conv_forward(self, p, x, w, b):
        return np.zeros([d + 1 for d in p.y_shape], dtype=np.float32)


class WrongDtype:
    name = "py.wrong_dtype"

    def conv_forward(self, p, x, w, b):
        return np.zeros(p.y_shape, dtype=np.float64)  # the case is f32


class WritesInput:
    name = "py.writes_input"

    def conv_forward(self, p, x, w, b):
        np.asarray(x)[...] = 0  # read-only: raises
        return np.zeros(p.y_shape, dtype=np.float32)


class Unavailable:
    name = "py.unavailable"

    def available(self):
        return "needs a device this machine lacks"


class Pid:
    """Passes nothing (y is zeros) but writes its process id, to show where Python runs."""

    name = "py.pid"

    def conv_forward(self, p, x, w, b):
        with open(os.environ["KC_PY_TEST_PIDS"], "a") as f:
            f.write("%d\n" % os.getpid())
        return np.zeros(p.y_shape, dtype=np.float32)


def kc_backends():
    return [Raises, NoOps, WrongShape, WrongDtype, WritesInput, Unavailable, Pid]
