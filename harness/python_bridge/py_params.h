// A case's parameters as the plain object a Python backend's calls receive
// (types.SimpleNamespace; docs/python.md, "Parameters"): op, dtype, shapes, and per
// spatial dim the kernel, stride, dilation and (lo, hi) padding, plus the op's own fields.
#pragma once

#include <Python.h>

#include "kc/case.h"
#include "kc/shape.h"

namespace kc::py {

// New references; null with a Python error set.
PyObject* params_of(const ConvGeometry& g, DType t, bool relu);
PyObject* params_of(const PoolGeometry& g, DType t);
PyObject* params_of(const AvgPoolGeometry& g, DType t);
// The case for supports(): its op's parameters, or for a stack only op and dtype.
PyObject* params_of(const Case& c);

}  // namespace kc::py
