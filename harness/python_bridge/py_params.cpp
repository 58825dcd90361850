// Fields are plain ints, bools, strings, lists and tuples, so that a module needs nothing
// of kernelcheck's to read them.
#include "py_params.h"

#include <string>
#include <variant>

#include "py_runtime.h"

namespace kc::py {
namespace {

class Fields {
 public:
  Fields() : d_(PyDict_New()) {}
  void set(const char* key, PyObject* value) {  // steals value
    Ref v(value);
    if (d_ && v) PyDict_SetItemString(d_.get(), key, v.get());
  }
  void set(const char* key, int64_t v) { set(key, PyLong_FromLongLong(v)); }
  void set(const char* key, bool v) { set(key, PyBool_FromLong(v ? 1 : 0)); }
  void set(const char* key, std::string_view v) {
    set(key, PyUnicode_FromStringAndSize(v.data(), static_cast<Py_ssize_t>(v.size())));
  }
  void set(const char* key, const Dims& v) {
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(v.size()));
    for (size_t i = 0; list != nullptr && i < v.size(); ++i) PyList_SET_ITEM(list, i, PyLong_FromLongLong(v[i]));
    set(key, list);
  }
  void set_spatial(const SpatialGeometry& s) {
    Dims kernel, stride, dilation;
    PyObject* padding = PyList_New(s.rank());
    for (int64_t i = 0; i < s.rank(); ++i) {
      const DimGeometry& d = s.dims[static_cast<size_t>(i)];
      kernel.push_back(d.kernel);
      stride.push_back(d.stride);
      dilation.push_back(d.dilation);
      if (padding != nullptr) PyList_SET_ITEM(padding, i, Py_BuildValue("(LL)", d.pad_lo, d.pad_hi));
    }
    set("kernel", kernel);
    set("stride", stride);
    set("dilation", dilation);
    set("padding", padding);
    set("rank", s.rank());
  }
  // types.SimpleNamespace(**fields)
  PyObject* done() {
    Ref types(PyImport_ImportModule("types"));
    Ref ns(types ? PyObject_GetAttrString(types.get(), "SimpleNamespace") : nullptr);
    Ref none(PyTuple_New(0));
    if (!ns || !none || !d_) return nullptr;
    return PyObject_Call(ns.get(), none.get(), d_.get());
  }

 private:
  Ref d_;
};

}  // namespace

PyObject* params_of(const ConvGeometry& g, DType t, bool relu) {
  Fields f;
  f.set("op", std::string_view(relu ? "conv_bias_relu" : "conv"));
  f.set("dtype", dtype_name(t));
  f.set("x_shape", g.x_shape());
  f.set("w_shape", g.w_shape());
  f.set("y_shape", g.y_shape());
  f.set("batch", g.batch);
  f.set("in_channels", g.in_channels);
  f.set("out_channels", g.out_channels);
  f.set("groups", g.groups);
  f.set("bias", g.bias);
  f.set("relu", relu);
  f.set("padding_mode", padding_mode_name(g.mode));
  f.set_spatial(g.spatial);
  return f.done();
}

namespace {

// The fields both pools have.
template <class Geometry>
void pool_fields(Fields& f, std::string_view op, const Geometry& g, DType t) {
  f.set("op", op);
  f.set("dtype", dtype_name(t));
  f.set("x_shape", g.x_shape());
  f.set("y_shape", g.y_shape());
  f.set("batch", g.batch);
  f.set("channels", g.channels);
  f.set("ceil_mode", g.ceil_mode);
  f.set_spatial(g.spatial);
}

}  // namespace

PyObject* params_of(const PoolGeometry& g, DType t) {
  Fields f;
  pool_fields(f, "maxpool", g, t);
  f.set("training", g.mode == PoolMode::kTraining);
  f.set("tie", tie_rule_name(g.tie));
  return f.done();
}

PyObject* params_of(const AvgPoolGeometry& g, DType t) {
  Fields f;
  pool_fields(f, "avgpool", g, t);
  f.set("count_include_pad", g.count_include_pad);
  f.set("divisor", g.divisor);
  return f.done();
}

namespace {

PyObject* op_params_of(const Case& c) {
  if (auto g = conv_geometry(c); g.ok()) return params_of(*g, c.dtype, op_name(c.op) == "conv_bias_relu");
  if (auto g = pool_geometry(c); g.ok()) return params_of(*g, c.dtype);
  if (auto g = avgpool_geometry(c); g.ok()) return params_of(*g, c.dtype);
  Fields f;
  f.set("op", op_name(c.op));
  f.set("dtype", dtype_name(c.dtype));
  return f.done();
}

}  // namespace

PyObject* params_of(const Case& c) {
  PyObject* p = op_params_of(c);
  // The accumulation the case holds a backend to (its own, or its dtype's default), so
  // that supports() can decline one its library does not offer.
  const std::string_view acc = dtype_name(accumulation_of(c));
  Ref value(PyUnicode_FromStringAndSize(acc.data(), static_cast<Py_ssize_t>(acc.size())));
  if (p != nullptr && (!value || PyObject_SetAttrString(p, "accumulation", value.get()) != 0)) {
    Py_DECREF(p);
    return nullptr;
  }
  return p;
}

}  // namespace kc::py
