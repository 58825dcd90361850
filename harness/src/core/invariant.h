// KC_CHECK: aborts on a programmer error (a broken invariant inside kernelcheck), never
// on bad input, which is reported as a Status.
#pragma once

namespace kc {
[[noreturn]] void check_failed(const char* condition, const char* file, int line);
}  // namespace kc

#define KC_CHECK(cond) ((cond) ? static_cast<void>(0) : ::kc::check_failed(#cond, __FILE__, __LINE__))
