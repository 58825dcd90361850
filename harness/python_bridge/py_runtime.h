// The embedded interpreter of the Python bridge (docs/python.md): started once per process
// on first use (in a worker, never in kcheck's parent, which only reads what a probe
// child printed), each module imported once per process from its file, and a Python
// exception turned into text with its traceback. Every function here takes the GIL.
#pragma once

#include <Python.h>

#include <string>

namespace kc::py {

// A new reference, released by the destructor (with the GIL held by the caller).
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject* o) : o_(o) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& other) noexcept : o_(other.o_) { other.o_ = nullptr; }
  Ref& operator=(Ref&& other) noexcept {
    std::swap(o_, other.o_);
    return *this;
  }
  ~Ref() { Py_XDECREF(o_); }
  PyObject* get() const { return o_; }
  explicit operator bool() const { return o_ != nullptr; }
  PyObject* release() {
    PyObject* o = o_;
    o_ = nullptr;
    return o;
  }

 private:
  PyObject* o_ = nullptr;
};

// Holds the GIL for its scope, starting the interpreter when this process has none (when
// it cannot start, python_start_error() says why and nothing is held).
class Gil {
 public:
  Gil();
  ~Gil();
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

// Why the interpreter could not start in this process (then no C-API call may be made),
// or empty.
const std::string& python_start_error();

// The pending Python exception as "Traceback ...\nValueError: ..." (and cleared); empty
// when none is pending.
std::string take_error();

// The module of the Python file at `path` (imported once per process, its folder put
// first on sys.path); null with the error taken into `why`.
PyObject* module_at(const std::string& path, std::string& why);

// A new reference to the function `name` that the Python source `code` defines (run in
// a namespace of its own); null with the error pending.
PyObject* python_function(const char* code, const char* name);

// str(o), or "<unprintable>".
std::string text_of(PyObject* o);

}  // namespace kc::py
