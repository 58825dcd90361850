// f16 through _Float16 (exact both ways for values representable in f16); bf16 as the
// high half of an f32 (the harness's inputs are representable in bf16, so the cut is exact).
#include "py_arrays.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "py_runtime.h"

namespace kc::py {
namespace {

char format_of(DType t) {
  switch (t) {
    case DType::kF64:
      return 'd';
    case DType::kF32:
      return 'f';
    case DType::kF16:
      return 'e';
    case DType::kBF16:
      return 'H';
  }
  return 'd';
}

size_t item_bytes(DType t) { return t == DType::kF64 ? 8 : t == DType::kF32 ? 4 : 2; }

void store(DType t, double v, char* at) {
  if (t == DType::kF64) {
    std::memcpy(at, &v, 8);
  } else if (t == DType::kF32) {
    const float f = static_cast<float>(v);
    std::memcpy(at, &f, 4);
  } else if (t == DType::kF16) {
    const _Float16 h = static_cast<_Float16>(v);
    std::memcpy(at, &h, 2);
  } else {
    const float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const uint16_t high = static_cast<uint16_t>(bits >> 16);
    std::memcpy(at, &high, 2);
  }
}

double load(DType t, const char* at) {
  if (t == DType::kF64) {
    double d;
    std::memcpy(&d, at, 8);
    return d;
  }
  if (t == DType::kF32) {
    float f;
    std::memcpy(&f, at, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, at, 2);
  if (t == DType::kF16) {
    _Float16 x;
    std::memcpy(&x, &h, 2);
    return static_cast<double>(x);
  }
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// An array Python can read through the buffer protocol without a copy: its own bytes, a
// shape of at most kMaxDims, a one-letter struct format ('e' included, which a
// memoryview cannot be cast to), read-only (a backend writing into its inputs gets an error).
constexpr int kMaxDims = 8;
struct Array {
  PyObject_HEAD char* data;
  Py_ssize_t bytes, itemsize;
  int ndim;
  Py_ssize_t shape[kMaxDims], strides[kMaxDims];
  char format[2];
};

int array_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  auto* a = reinterpret_cast<Array*>(self);
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "kernelcheck's input arrays are read-only");
    view->obj = nullptr;
    return -1;
  }
  view->obj = Py_NewRef(self);
  view->buf = a->data;
  view->len = a->bytes;
  view->readonly = 1;
  view->itemsize = a->itemsize;
  view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? a->format : nullptr;
  view->ndim = a->ndim;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? a->shape : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? a->strides : nullptr;
  view->suboffsets = nullptr;
  view->internal = nullptr;
  return 0;
}

void array_dealloc(PyObject* self) {
  auto* a = reinterpret_cast<Array*>(self);
  PyMem_Free(a->data);
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyTypeObject* array_type() {
  static PyTypeObject* type = [] {
    static PyType_Slot slots[] = {{Py_tp_dealloc, reinterpret_cast<void*>(array_dealloc)},
                                  {Py_bf_getbuffer, reinterpret_cast<void*>(array_getbuffer)},
                                  {0, nullptr}};
    static PyType_Spec spec = {"kernelcheck.Array", sizeof(Array), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
    return reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  }();
  return type;
}

// A new Array of `shape` elements of `itemsize` bytes in `format`, its bytes filled by `fill`.
template <class Fill>
PyObject* view_of(size_t itemsize, char format, const Dims& shape, Fill&& fill) {
  PyTypeObject* type = array_type();
  if (type == nullptr) return nullptr;
  if (shape.size() > static_cast<size_t>(kMaxDims)) {
    PyErr_SetString(PyExc_ValueError, "a tensor of more than 8 dims");
    return nullptr;
  }
  Ref self(PyType_GenericAlloc(type, 0));
  if (!self) return nullptr;
  auto* a = reinterpret_cast<Array*>(self.get());
  a->itemsize = static_cast<Py_ssize_t>(itemsize);
  a->ndim = static_cast<int>(shape.size());
  a->format[0] = format;
  a->format[1] = 0;
  Py_ssize_t count = 1;
  for (int i = a->ndim - 1; i >= 0; --i) {
    a->shape[i] = shape[static_cast<size_t>(i)];
    a->strides[i] = count * a->itemsize;
    count *= a->shape[i];
  }
  a->bytes = count * a->itemsize;
  a->data = static_cast<char*>(PyMem_Malloc(static_cast<size_t>(std::max<Py_ssize_t>(a->bytes, 1))));
  if (a->data == nullptr) return PyErr_NoMemory();
  fill(a->data);
  return self.release();
}

std::string shape_text(const Py_ssize_t* dims, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string shape_text(const Dims& d) {
  std::vector<Py_ssize_t> v(d.begin(), d.end());
  return shape_text(v.data(), static_cast<int>(v.size()));
}

// The buffer of o (or of o.__array__() when o has none) into `view`, holding `keep`.
std::string buffer_of(PyObject* o, const char* what, Ref& keep, Py_buffer& view) {
  if (PyObject_CheckBuffer(o) == 0 && PyObject_HasAttrString(o, "__array__") != 0) {
    keep = Ref(PyObject_CallMethod(o, "__array__", nullptr));
    if (!keep) return std::string(what) + ": its __array__() raised: " + take_error();
    o = keep.get();
  }
  if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return std::string(what) + ": a " + Py_TYPE(o)->tp_name +
           " is not an array (it offers neither the buffer protocol nor __array__)";
  }
  return {};
}

// The element type letter of a buffer format ("<f", "=e", "l"), with its size.
// Big-endian formats ('>', '!') are refused ('?'): read natively they would be garbage.
char letter(const char* format) {
  if (format == nullptr) return 'B';
  if (*format == '>' || *format == '!') return '?';
  while (*format == '<' || *format == '=' || *format == '@') ++format;
  return *format;
}

// Calls each(flat index, byte pointer) over the buffer in row-major order, any strides.
template <class Each>
void walk(const Py_buffer& v, Each&& each) {
  const int n = v.ndim;
  std::vector<Py_ssize_t> at(static_cast<size_t>(n), 0);
  const Py_ssize_t total = n == 0 ? 1 : [&] {
    Py_ssize_t t = 1;
    for (int i = 0; i < n; ++i) t *= v.shape[i];
    return t;
  }();
  std::vector<Py_ssize_t> strides(static_cast<size_t>(n));  // C order where the exporter gives none
  Py_ssize_t step = v.itemsize;
  for (int i = n - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = v.strides ? v.strides[i] : step;
    step *= v.shape[i];
  }
  for (Py_ssize_t k = 0; k < total; ++k) {
    const char* p = static_cast<const char*>(v.buf);
    for (int i = 0; i < n; ++i) p += at[static_cast<size_t>(i)] * strides[static_cast<size_t>(i)];
    each(k, p);
    for (int i = n - 1; i >= 0 && ++at[static_cast<size_t>(i)] == v.shape[i]; --i) at[static_cast<size_t>(i)] = 0;
  }
}

// Why the buffer is not `shape` of `want` elements of `bytes` bytes, or empty.
std::string mismatch(const Py_buffer& v, const char* what, const Dims& shape, char want, size_t bytes,
                     const char* type_name) {
  const bool same_shape = v.ndim == static_cast<int>(shape.size()) && [&] {
    for (int i = 0; i < v.ndim; ++i)
      if (v.shape[i] != shape[static_cast<size_t>(i)]) return false;
    return true;
  }();
  if (!same_shape) {
    return std::string(what) + ": shape " + shape_text(v.shape, v.ndim) + " where " + shape_text(shape) + " is due";
  }
  const char got = letter(v.format);
  const bool int64_alias = want == 'q' && (got == 'l' || got == 'q');
  if ((got != want && !int64_alias) || static_cast<size_t>(v.itemsize) != bytes) {
    return std::string(what) + ": elements of format '" + (v.format ? v.format : "B") + "' (" +
           std::to_string(v.itemsize) + " bytes) where the case's " + type_name + " ('" + std::string(1, want) +
           "') is due";
  }
  return {};
}

}  // namespace

PyObject* to_python(const Tensor& t) {
  const size_t b = item_bytes(t.dtype);
  return view_of(b, format_of(t.dtype), t.shape, [&](char* p) {
    for (int64_t i = 0; i < t.size(); ++i) store(t.dtype, t[i], p + static_cast<size_t>(i) * b);
  });
}

PyObject* to_python(const IndexTensor& t) {
  return view_of(8, 'q', t.shape, [&](char* p) { std::memcpy(p, t.data.data(), static_cast<size_t>(t.size()) * 8); });
}

std::string from_python(PyObject* o, const char* what, Tensor& out) {
  Ref keep;
  Py_buffer v;
  if (std::string bad = buffer_of(o, what, keep, v); !bad.empty()) return bad;
  const std::string type = std::string(dtype_name(out.dtype)) + (out.dtype == DType::kBF16 ? " as uint16 bits" : "");
  std::string bad = mismatch(v, what, out.shape, format_of(out.dtype), item_bytes(out.dtype), type.c_str());
  if (bad.empty()) walk(v, [&](Py_ssize_t k, const char* p) { out[k] = load(out.dtype, p); });
  PyBuffer_Release(&v);
  return bad;
}

std::string from_python(PyObject* o, const char* what, IndexTensor& out) {
  Ref keep;
  Py_buffer v;
  if (std::string bad = buffer_of(o, what, keep, v); !bad.empty()) return bad;
  std::string bad = mismatch(v, what, out.shape, 'q', 8, "int64");
  if (bad.empty()) {
    walk(v, [&](Py_ssize_t k, const char* p) { std::memcpy(&out.data[static_cast<size_t>(k)], p, 8); });
  }
  PyBuffer_Release(&v);
  return bad;
}

}  // namespace kc::py
