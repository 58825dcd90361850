// dnnl::error to Status at the backend interface, where no exception may cross:
// oneDNN's "unimplemented" (it has no implementation of the problem) is unimplemented,
// any other oneDNN error and any other exception is internal.
#pragma once

#include <exception>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "kc/status.h"

namespace kc::onednn {

template <class F>
Status guarded(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const dnnl::error& e) {
    const std::string m = "oneDNN " + what + ": " + e.what() + " (dnnl_status_t " + std::to_string(e.status) + ")";
    return e.status == dnnl_unimplemented ? unimplemented(m) : internal_error(m);
  } catch (const std::exception& e) {
    return internal_error("oneDNN " + what + ": " + e.what());
  }
}

}  // namespace kc::onednn
