"""A module whose import fails: kcheck --python must exit 2 with its traceback."""
import kernelcheck_no_such_module  # noqa: F401


def kc_backends():
    return []
