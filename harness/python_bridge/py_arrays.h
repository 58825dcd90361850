// Tensors across the bridge (docs/python.md, "Arrays"). An input goes to Python as a
// memoryview of the case dtype ('d' f64, 'f' f32, 'e' f16, 'H' bf16 as its raw 16 bits)
// shaped like the tensor, over a bytearray Python owns, so that numpy.asarray() takes it
// without a copy. An output comes back through the buffer protocol (any strides), or
// through __array__ for objects without it (a CPU torch tensor), and must have the
// expected shape and the case dtype's element type.
#pragma once

#include <Python.h>

#include <string>

#include "kc/tensor.h"

namespace kc::py {

// A new array holding t's values in t.dtype; null with a Python error set.
PyObject* to_python(const Tensor& t);
// int64 ('q') indices.
PyObject* to_python(const IndexTensor& t);

// Reads `o` into `out` (whose shape and dtype are already set); empty on success, else
// why not ("dx: shape [2, 3] where [2, 4] is due").
std::string from_python(PyObject* o, const char* what, Tensor& out);
std::string from_python(PyObject* o, const char* what, IndexTensor& out);

}  // namespace kc::py
