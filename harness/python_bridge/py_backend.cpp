// Each call: the GIL, the instance (made on the first call), the method by name (missing:
// unimplemented, as for a C++ backend that does not offer the op), its arguments as
// memoryviews and the parameters object, its results read back into the harness's
// tensors. A Python exception is the call's failure, its traceback the message.
#include "py_backend.h"

#include <vector>

#include "py_arrays.h"
#include "py_params.h"
#include "py_runtime.h"

namespace kc::py {
namespace {

class PyBackend final : public Backend {
 public:
  explicit PyBackend(Declared d) : d_(std::move(d)) {}
  ~PyBackend() override {
    if (instance_) {
      Gil gil;
      instance_ = Ref();
    }
  }
  std::string name() const override { return d_.name; }
  Status available() const override { return d_.unavailable.empty() ? ok_status() : unavailable(d_.unavailable); }
  Numerics numerics() const override { return d_.numerics; }

  Status supports(const Case& c) const override {
    Gil gil;
    PyObject* self = instance();
    if (self == nullptr) return error_status("making the backend");
    if (PyObject_HasAttrString(self, "supports") == 0) return Backend::supports(c);
    Ref p(params_of(c));
    Ref answer(p ? PyObject_CallMethod(self, "supports", "O", p.get()) : nullptr);
    if (!answer) return error_status("supports()");
    if (answer.get() == Py_None) return ok_status();
    return unimplemented(text_of(answer.get()));
  }

  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    const Gil gil;  // before the arguments are made
    return call("conv_forward", params_of(g, x.dtype, relu), {arg(x), arg(w), arg(b)}, {{"y", &y}});
  }
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    const Gil gil;  // before the arguments are made
    return call("conv_backward", params_of(g, x.dtype, relu), {arg(x), arg(w), arg(b), arg(dy)},
                {{"dx", &dx}, {"dw", &dw}, {"db", db}});
  }
  Status maxpool_forward(const PoolGeometry& g, const Tensor& x, Tensor& y, IndexTensor* indices) override {
    const Gil gil;  // before the arguments are made
    return call("maxpool_forward", params_of(g, x.dtype), {arg(x)}, {{"y", &y}}, indices);
  }
  Status maxpool_backward(const PoolGeometry& g, const Tensor& dy, const IndexTensor* indices, Tensor& dx) override {
    if (indices == nullptr) {
      return failed_precondition("max-pool backward without indices: an inference-mode forward keeps none");
    }
    const Gil gil;
    Ref idx(to_python(*indices));
    return call("maxpool_backward", params_of(g, dy.dtype), {arg(dy), idx.release()}, {{"dx", &dx}});
  }
  Status avgpool_forward(const AvgPoolGeometry& g, const Tensor& x, Tensor& y) override {
    const Gil gil;  // before the arguments are made
    return call("avgpool_forward", params_of(g, x.dtype), {arg(x)}, {{"y", &y}});
  }
  Status avgpool_backward(const AvgPoolGeometry& g, const Tensor& dy, Tensor& dx) override {
    const Gil gil;  // before the arguments are made
    return call("avgpool_backward", params_of(g, dy.dtype), {arg(dy)}, {{"dx", &dx}});
  }

 private:
  struct Out {
    const char* name;
    Tensor* t;  // null: not asked for (a conv without bias: its db)
  };

  // A new reference: t as a memoryview, or None for an absent tensor. Taken with the GIL.
  static PyObject* arg(const Tensor* t) {
    if (t == nullptr) return Py_NewRef(Py_None);
    return to_python(*t);
  }
  static PyObject* arg(const Tensor& t) { return to_python(t); }

  Status error_status(const std::string& during) const {
    std::string tb = take_error();
    if (tb.empty()) tb = make_error_;
    return internal_error(d_.name + ": Python raised in " + during + ":\n" + tb);
  }

  // The instance, made on first use in this process; null with the error kept.
  PyObject* instance() const {
    if (instance_ || !make_error_.empty()) return instance_.get();
    PyObject* m = module_at(d_.module_path, make_error_);
    if (m == nullptr) return nullptr;
    Ref list(PyObject_CallMethod(m, "kc_backends", nullptr));
    Ref seq(list ? PySequence_Fast(list.get(), "kc_backends() must return a list") : nullptr);
    if (!seq || PySequence_Fast_GET_SIZE(seq.get()) <= d_.index) {
      make_error_ = PyErr_Occurred() ? take_error() : "kc_backends() returned fewer backends than when probed";
      return nullptr;
    }
    instance_ = Ref(PyObject_CallNoArgs(PySequence_Fast_GET_ITEM(seq.get(), d_.index)));
    if (!instance_) {
      make_error_ = take_error();
      return nullptr;
    }
    // The probe's order must hold here (a list built from a set may differ per process).
    Ref name(PyObject_GetAttrString(instance_.get(), "name"));
    if (!name || text_of(name.get()) != d_.name) {
      PyErr_Clear();
      make_error_ = "kc_backends()[" + std::to_string(d_.index) + "] is " + (name ? text_of(name.get()) : "unnamed") +
                    " in this process, " + d_.name +
                    " when probed: kc_backends() must return its backends in a fixed order";
      instance_ = Ref();
    }
    return instance_.get();
  }

  Status call(const char* method, PyObject* params, std::vector<PyObject*> args, std::vector<Out> outs,
              IndexTensor* indices = nullptr) {
    Gil gil;
    Ref p(params);
    std::vector<Ref> owned;
    for (PyObject* a : args) owned.emplace_back(a);
    if (!p) return error_status("building the parameters");
    for (const Ref& a : owned) {
      if (!a) return error_status("building the arguments");
    }
    PyObject* self = instance();
    if (self == nullptr) return error_status("making the backend");
    if (PyObject_HasAttrString(self, method) == 0) return unimplemented(d_.name + " has no " + method + "()");
    Ref tuple(PyTuple_New(static_cast<Py_ssize_t>(owned.size()) + 1));
    if (!tuple) return error_status("building the arguments");
    PyTuple_SET_ITEM(tuple.get(), 0, p.release());
    for (size_t i = 0; i < owned.size(); ++i) PyTuple_SET_ITEM(tuple.get(), i + 1, owned[i].release());
    Ref fn(PyObject_GetAttrString(self, method));
    Ref result(fn ? PyObject_Call(fn.get(), tuple.get(), nullptr) : nullptr);
    if (!result) return error_status(std::string(method) + "()");
    return read_results(method, result.get(), outs, indices);
  }

  // One output: the result itself; several (or indices): a tuple in order.
  Status read_results(const char* method, PyObject* result, const std::vector<Out>& outs, IndexTensor* indices) {
    const size_t want = outs.size() + (indices != nullptr ? 1 : 0);
    std::vector<PyObject*> items;  // borrowed
    if (want == 1 && !PyTuple_Check(result)) {
      items.push_back(result);
    } else if (PyTuple_Check(result) || PyList_Check(result)) {
      for (Py_ssize_t i = 0; i < PySequence_Size(result); ++i) items.push_back(PySequence_Fast_GET_ITEM(result, i));
    }
    if (items.size() < want) {
      return internal_error(d_.name + ": " + method + "() returned " + std::string(Py_TYPE(result)->tp_name) +
                            " where " + std::to_string(want) + " array(s) are due");
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].t == nullptr) continue;
      if (std::string bad = from_python(items[i], outs[i].name, *outs[i].t); !bad.empty())
        return internal_error(d_.name + ": " + method + "() " + bad);
    }
    if (indices != nullptr) {
      if (std::string bad = from_python(items[outs.size()], "indices", *indices); !bad.empty())
        return internal_error(d_.name + ": " + method + "() " + bad);
    }
    return ok_status();
  }

  Declared d_;
  mutable Ref instance_;
  mutable std::string make_error_;
};

}  // namespace

std::unique_ptr<Backend> make_python_backend(const Declared& d) { return std::make_unique<PyBackend>(d); }

}  // namespace kc::py
