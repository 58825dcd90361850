// Status names and formatting.
#include "kc/status.h"

namespace kc {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kOutOfRange:
      return "out_of_range";
    case StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kUnimplemented:
      return "unimplemented";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

}  // namespace kc

#include <cstdio>
#include <cstdlib>

#include "core/invariant.h"

void kc::invariant_failed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "kernelcheck internal error: %s:%d: KC_INVARIANT(%s) failed\n", file, line, condition);
  std::abort();
}
