// The child prints one line per backend, "backend<TAB>name<TAB>unavailable<TAB>numerics",
// or one "error<TAB>text" line (newlines in a traceback written as \n), then "done".
#include "py_probe.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "backend/plugin_probe.h"
#include "py_runtime.h"
#include "run/fd_io.h"

namespace kc::py {
namespace {

std::string one_line(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Python's side of the probe: one line per backend, in kc_backends()'s order.
const char* kAsk =
    "def _kc_probe(m):\n"
    "    if not hasattr(m, 'kc_backends'):\n"
    "        raise AttributeError('the module defines no kc_backends() (it returns the backend classes)')\n"
    "    out = []\n"
    "    for make in m.kc_backends():\n"
    "        b = make()\n"
    "        name = getattr(b, 'name', None)\n"
    "        if not isinstance(name, str): raise TypeError(repr(make) + ': no str attribute name')\n"
    "        why = b.available() if hasattr(b, 'available') else None\n"
    "        num = getattr(b, 'numerics', None) or {}\n"
    "        if not isinstance(num, dict): raise TypeError(name + ': numerics must be a dict')\n"
    "        out.append((name, '' if why is None else str(why),\n"
    "                    ';'.join(str(k) + '=' + str(v) for k, v in num.items())))\n"
    "    return out\n";

std::string ask_module(const std::string& path) {
  Gil gil;
  std::string why;
  PyObject* m = module_at(path, why);
  if (m == nullptr) return "error\t" + one_line(why) + "\n";
  Ref probe(python_function(kAsk, "_kc_probe"));
  Ref list(probe ? PyObject_CallFunction(probe.get(), "O", m) : nullptr);
  if (!list) return "error\t" + one_line(take_error()) + "\n";
  std::string out;
  for (Py_ssize_t i = 0; i < PyList_Size(list.get()); ++i) {
    PyObject* t = PyList_GetItem(list.get(), i);
    out += "backend\t" + one_line(text_of(PyTuple_GetItem(t, 0))) + "\t" + one_line(text_of(PyTuple_GetItem(t, 1))) +
           "\t" + one_line(text_of(PyTuple_GetItem(t, 2))) + "\n";
  }
  return out;
}

// The child stays in its parent's process group (a plugin probe that times out kills the
// group, this child with it) and dies with its parent.
[[noreturn]] void child(const std::string& path, int fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  for (int sig : {SIGPIPE, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, SIG_DFL);
  if (const int null = open("/dev/null", O_WRONLY); null >= 0) dup2(null, STDOUT_FILENO);
  (void)write_all(fd, ask_module(path) + "done\n");
  _exit(0);
}

StatusOr<std::vector<Declared>> parse_lines(const std::string& path, const std::string& out) {
  std::vector<Declared> found;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("error\t", 0) == 0)
      return failed_precondition("--python " + path + ":\n" + unescape(line.substr(6)));
    if (line.rfind("backend\t", 0) != 0) continue;
    Declared d;
    d.module_path = path;
    d.index = static_cast<int>(found.size());
    std::istringstream fields(line.substr(8));
    std::string numerics;
    std::getline(fields, d.name, '\t');
    std::getline(fields, d.unavailable, '\t');
    std::getline(fields, numerics);
    StatusOr<Numerics> n = parse_numerics(numerics);
    if (!n.ok()) return failed_precondition("--python " + path + ": backend " + d.name + ": " + n.status().message());
    d.numerics = *n;
    found.push_back(std::move(d));
  }
  if (found.empty()) return failed_precondition("--python " + path + ": kc_backends() returned no backend");
  return found;
}

bool truthy(const std::string& v) { return v == "True" || v == "true" || v == "1"; }

}  // namespace

StatusOr<Numerics> parse_numerics(const std::string& text) {
  Numerics n;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ';');) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "accumulation") {
      const auto t = parse_dtype(value);
      if (!t) return invalid_argument("numerics: accumulation '" + value + "' is not f64, f32, f16 or bf16");
      n.accumulation = *t;
    } else if (key == "flushes_subnormals") {
      n.flushes_subnormals = truthy(value);
    } else if (key == "skips_padding_taps") {
      n.skips_padding_taps = truthy(value);
    } else if (key == "relu_nan_grad") {
      if (value == "zero")
        n.relu_nan_grad = ReluNanGrad::kZero;
      else if (value == "pass_dy")
        n.relu_nan_grad = ReluNanGrad::kPassDy;
      else if (value == "either")
        n.relu_nan_grad = ReluNanGrad::kEither;
      else
        return invalid_argument("numerics: relu_nan_grad '" + value + "' is not zero, pass_dy or either");
    } else if (key == "algorithm") {
      if (value == "direct")
        n.algorithm = Algorithm::kDirect;
      else if (value == "winograd")
        n.algorithm = Algorithm::kWinograd;
      else if (value == "fft")
        n.algorithm = Algorithm::kFft;
      else if (value == "other")
        n.algorithm = Algorithm::kOtherTransform;
      else
        return invalid_argument("numerics: algorithm '" + value + "' is not direct, winograd, fft or other");
    } else if (key == "transform_m" || key == "transform_r") {
      (key == "transform_m" ? n.transform_m : n.transform_r) = std::atoi(value.c_str());
    } else {
      return invalid_argument("numerics: unknown key '" + key +
                              "' (known: accumulation, flushes_subnormals, skips_padding_taps, relu_nan_grad, "
                              "algorithm, transform_m, transform_r)");
    }
  }
  return n;
}

StatusOr<std::vector<Declared>> probe_module(const std::string& path, double timeout_seconds) {
  auto finished = [](const std::string& out) { return out.find("done\n") != std::string::npos; };
  // Not a group of its own: inside the --plugin probe's child, it is killed with that.
  const ProbeOutput r = run_probe_child([&](int fd) { child(path, fd); }, timeout_seconds, finished, false);
  if (!r.error.empty()) return internal_error("--python " + path + ": " + r.error);
  if (finished(r.out)) return parse_lines(path, r.out);
  if (r.timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_seconds);
    return failed_precondition("--python " + path + ": importing it and asking its backends took more than " + limit +
                               " s");
  }
  return failed_precondition("--python " + path + ": the process that imported it " + how_child_ended(r.status) +
                             " before it declared its backends");
}

}  // namespace kc::py
