// The interpreter is started without Python's signal handlers (the worker's dispositions
// stay kcheck's), as the python3 it was built for (so that its prefix, and with it the
// standard library and dist-packages, is that one's whatever python3 PATH finds), and the
// GIL released once started, so that any thread of the worker can take it.
#include "py_runtime.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace kc::py {
namespace {

std::once_flag g_started;

// libpython came in with this plugin, loaded RTLD_LOCAL: its symbols are made global so
// that the extension modules Python loads (numpy's, torch's) find them.
void make_libpython_global() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Py_InitializeFromConfig), &info) != 0 && info.dli_fname != nullptr) {
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  }
}

// Why the interpreter could not start; empty when it runs.
std::string& start_error() {
  static std::string why;
  return why;
}

// Python's C-locale coercion (PEP 538) would set LC_CTYPE in the environment, which a
// worker reads as a changed process state (run/worker.h): it is turned off.
void start() {
  if (Py_IsInitialized()) return;
  make_libpython_global();
  PyPreConfig pre;
  PyPreConfig_InitPythonConfig(&pre);
  pre.coerce_c_locale = 0;
  pre.coerce_c_locale_warn = 0;
  PyStatus st = Py_PreInitialize(&pre);
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;
  if (!PyStatus_Exception(st)) st = PyConfig_SetBytesString(&config, &config.program_name, KC_PYTHON_EXECUTABLE);
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) {
    start_error() = std::string("the Python interpreter did not start: ") + (st.err_msg ? st.err_msg : "?");
    return;
  }
  PyEval_SaveThread();  // the GIL, held by the starting thread, is taken per call (Gil)
}

}  // namespace

Gil::Gil() {
  std::call_once(g_started, start);
  if (Py_IsInitialized()) state_ = PyGILState_Ensure();
}

Gil::~Gil() {
  if (Py_IsInitialized()) PyGILState_Release(state_);
}

const std::string& python_start_error() { return start_error(); }

std::string text_of(PyObject* o) {
  Ref s(o == nullptr ? nullptr : PyObject_Str(o));
  if (!s) {
    PyErr_Clear();
    return "<unprintable>";
  }
  const char* c = PyUnicode_AsUTF8(s.get());
  if (c == nullptr) {
    PyErr_Clear();
    return "<unprintable>";
  }
  return c;
}

std::string take_error() {
  if (!PyErr_Occurred()) return {};
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  Ref t(type), v(value), b(tb);
  Ref traceback(PyImport_ImportModule("traceback"));
  Ref lines(traceback ? PyObject_CallMethod(traceback.get(), "format_exception", "OOO", t ? t.get() : Py_None,
                                            v ? v.get() : Py_None, b ? b.get() : Py_None)
                      : nullptr);
  Ref empty(PyUnicode_FromString(""));
  Ref joined(lines && empty ? PyUnicode_Join(empty.get(), lines.get()) : nullptr);
  if (!joined) {
    PyErr_Clear();
    return text_of(t.get()) + ": " + text_of(v.get());
  }
  std::string s = text_of(joined.get());
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

PyObject* python_function(const char* code, const char* name) {
  Ref globals(PyDict_New());
  if (!globals) return nullptr;
  PyDict_SetItemString(globals.get(), "__builtins__", PyEval_GetBuiltins());
  Ref ran(PyRun_String(code, Py_file_input, globals.get(), globals.get()));
  PyObject* fn = ran ? PyDict_GetItemString(globals.get(), name) : nullptr;  // borrowed: kept by its __globals__
  return fn != nullptr ? Py_NewRef(fn) : nullptr;
}

PyObject* module_at(const std::string& path, std::string& why) {
  static std::map<std::string, PyObject*> modules;  // kept for the process's life
  if (auto it = modules.find(path); it != modules.end()) return it->second;
  if (!python_start_error().empty()) {
    why = python_start_error();
    return nullptr;
  }
  const char* code =
      "import importlib.util, os, sys\n"
      "def _kc_load(path):\n"
      "    folder = os.path.dirname(os.path.abspath(path))\n"
      "    if folder not in sys.path: sys.path.insert(0, folder)\n"
      "    name = os.path.splitext(os.path.basename(path))[0]\n"
      "    spec = importlib.util.spec_from_file_location(name, path)\n"
      "    if spec is None: raise ImportError('not a Python module: ' + path)\n"
      "    m = importlib.util.module_from_spec(spec)\n"
      "    sys.modules[name] = m\n"
      "    spec.loader.exec_module(m)\n"
      "    return m\n";
  Ref load(python_function(code, "_kc_load"));
  Ref m(load ? PyObject_CallFunction(load.get(), "s", path.c_str()) : nullptr);
  if (!m) {
    why = take_error();
    return nullptr;
  }
  return modules[path] = m.release();
}

}  // namespace kc::py
