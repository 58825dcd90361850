// The checks of docs/checks.md, described once: name, what each proves, the ops it
// applies to, whether it runs on the oracle itself, whether it judges backward values,
// and why it never applies to a case. The case reader, validation, the runner's scope
// rules, `kcheck checks`, --help and the README's table all read this table; a check's
// code (checks/<name>.cpp, stack/<name>.cpp) is bound to its row by name. Row order is
// the order in which checks run and are reported.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kc/case.h"
#include "kc/status.h"

namespace kc {

// Whether a check applies to single ops, to stacks, or to both. Which single ops, and
// when, each op's module says (ops/op_module.h, never_applies).
enum class Scope { kSingle, kStack, kBoth };

// Whether a check compares backward values under the tolerance model (validation of
// `tolerance: exact` needs dy inline or an integer fill exactly then).
enum class Judges { kNo, kYes, kOnConv, kWithExpectedGradients };

// Candidate calls a single-op check needs to have succeeded; the runner applies it: a
// failed call is the check's FAILED, an unimplemented one its SKIPPED.
enum Needs : unsigned { kNeedsNothing = 0, kNeedsForward = 1, kNeedsBackward = 3 };

struct CheckInfo {
  std::string_view name;
  std::string_view proves;  // one line, for --help and the README
  Scope scope;
  bool on_oracle;  // runs when the backend under test is the reference
  Judges judges;
  Needs needs;
  // Why it never applies to a case, from the case alone and whatever its op, beyond the
  // scope (empty: it may apply). Null: no such rule.
  std::string (*never_applies)(const Case&);
};

const std::vector<CheckInfo>& check_table();
const CheckInfo* find_check(std::string_view name);

// Why check `name` never applies to `c`, or empty: a mistake in a case's `checks:` list,
// refused when the file is read. What depends on the backend or the data (forward never
// runs on the oracle, non-finite inputs) is decided when the check runs.
std::string check_never_applies(const Case& c, std::string_view name);

// invalid_argument for the first check in c.checks that never applies:
//   "checks: argmax never applies to this case: argmax applies to max pooling only ..."
// A list the case takes from `defaults:` (from_defaults) is shared by cases of several
// kinds and means "these checks, where they apply": it is refused only when none of its
// checks applies to the case, which would then check nothing.
Status validate_checks(const Case& c, bool from_defaults = false);

// The checks of c.checks that may apply to `c`, in list order: a list taken from
// `defaults:` resolved for the case, so that the case (and a reproducer written from it)
// names only checks it runs, and reads back alone, where validate_checks refuses the rest.
std::vector<std::string> checks_that_apply(const Case& c);

// Whether the case's checks compare backward values (every default list does).
bool judges_backward(const Case& c);

// Why a check that does not run on the oracle is skipped there: names the self-checks.
std::string oracle_self_reason();

// "a, b and c": the names of the checks whose row satisfies `pick`, in table order.
std::string check_names(bool (*pick)(const CheckInfo&));

// The ops (their names, in OpParams' order) a check may apply to, by the scope and each
// op's module on the op's default params: what `kcheck checks` prints.
std::vector<std::string_view> ops_checked_by(const CheckInfo& info);

}  // namespace kc
