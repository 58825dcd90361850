// KC_INVARIANT: aborts on a programmer error (a broken invariant inside kernelcheck), never
// on bad input, which is reported as a Status.
#pragma once

namespace kc {
[[noreturn]] void invariant_failed(const char* condition, const char* file, int line);
}  // namespace kc

#define KC_INVARIANT(cond) ((cond) ? static_cast<void>(0) : ::kc::invariant_failed(#cond, __FILE__, __LINE__))
