// Status and StatusOr<T>: how every expected failure travels in kernelcheck.
// Invariant: a Status that is not ok carries the most specific code and a message
// a user can act on (which file/field, which rule). No exception crosses a module
// boundary; exceptions from third-party libraries are caught at the I/O edge.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kc {

enum class StatusCode {
  kOk,
  kInvalidArgument,     // the case or the input breaks a rule of the contract
  kOutOfRange,          // an index or extent outside what the contract allows
  kResourceExhausted,   // the case asks for more memory than the cap
  kFailedPrecondition,  // the call is not valid in this state (e.g. backward without indices)
  kUnimplemented,       // a backend does not support the case
  kUnavailable,         // a backend cannot run here (no device, no library)
  kNotFound,            // a file or named thing does not exist
  kInternal,            // a bug in kernelcheck itself
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: conv.groups: 3 does not divide input.channels 8"
  std::string to_string() const;
  // Returns a copy whose message is prefixed with `context: `.
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status ok_status() { return Status(); }
inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status out_of_range(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status resource_exhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status failed_precondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a value or a non-ok Status.
template <class T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "StatusOr built from an ok Status has no value");
  }
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace kc

#define KC_CONCAT_INNER_(a, b) a##b
#define KC_CONCAT_(a, b) KC_CONCAT_INNER_(a, b)

#define KC_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::kc::Status kc_status_ = (expr);        \
    if (!kc_status_.ok()) return kc_status_; \
  } while (0)

#define KC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

// KC_ASSIGN_OR_RETURN(auto geo, conv_geometry(c));
#define KC_ASSIGN_OR_RETURN(lhs, expr) KC_ASSIGN_OR_RETURN_IMPL_(KC_CONCAT_(kc_statusor_, __LINE__), lhs, expr)
