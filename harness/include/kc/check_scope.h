// Which requested checks can run on a case at all, decided from the case alone: a check
// named under `checks:` that never applies, whatever the backend and the data (argmax
// on a conv, golden without `expected:`, drift on an f32 stack), is a mistake in the
// case file and is refused when the file is read, instead of being SKIPPED on every
// backend. Checks whose applicability depends on the backend (forward never runs on the
// oracle itself) or on the data (non-finite inputs) are not decided here: they are
// SKIPPED with the reason when they run. The reasons are the checks' own.
#pragma once

#include <string>
#include <string_view>

#include "kc/case.h"
#include "kc/status.h"

namespace kc {

// Why check `name` never applies to `c`, or empty.
std::string check_never_applies(const Case& c, std::string_view name);

// invalid_argument for the first check in c.checks that never applies:
//   "checks: argmax never applies to this case: argmax applies to max pooling only ..."
// A list the case takes from `defaults:` (from_defaults) is shared by cases of several
// kinds and means "these checks, where they apply": it is refused only when none of its
// checks applies to the case, which would then check nothing.
Status validate_checks(const Case& c, bool from_defaults = false);

}  // namespace kc
