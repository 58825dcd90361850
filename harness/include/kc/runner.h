// Checking cases on backends, in this process: the per-case core the CLI, ctest and
// fuzzing share. A case x backend yields one CaseResult; nothing here throws.
#pragma once

#include <string>
#include <vector>

#include "kc/backend.h"
#include "kc/case.h"
#include "kc/case_io.h"
#include "kc/registry.h"
#include "kc/result.h"

namespace kc {

namespace checks {
class OracleMemo;  // what the oracle computed for a case, kept across its backends in one worker
}

// Runs every requested check that applies (the case's `checks:`, or all that apply
// when it lists none) of one valid case on one backend. A check the case asks for
// that does not apply is reported SKIPPED with its reason; one it does not ask for is
// left out. The backend named "reference" checks itself (see checks.h). `fresh` makes
// new instances of the backend, which the state check compares with; without it the
// state check runs its same-shape sequence only. `memo` keeps what the oracle computes
// for the case, for the next backend checked on it in this process (null: not kept).
CaseResult check_case(const Case& c, Backend& backend, const Registry::Factory* fresh = nullptr,
                      checks::OracleMemo* memo = nullptr);

// As check_case for a case as loaded from a file: a case refused at load is INVALID,
// unless it carries `expect: {error: ...}` and the error contains that text (PASSED);
// a case that must be refused but loads is FAILED.
CaseResult check_loaded(const LoadedCase& loaded, Backend& backend, const Registry::Factory* fresh = nullptr,
                        checks::OracleMemo* memo = nullptr);

// check_loaded on a new backend from the registry; a factory that throws (a plugin's
// bug) makes the case CRASHED with the reason, its labels kept.
CaseResult check_loaded_on(const LoadedCase& loaded, const Registry& registry, const std::string& backend,
                           checks::OracleMemo* memo = nullptr);

// Checks left out of every case checked in this process from now on (and in the workers
// it forks), whatever the cases ask: `kcheck run --skip-checks`. Names of the check table.
void set_skipped_checks(std::vector<std::string> names);
const std::vector<std::string>& skipped_checks();

// "name" of the case, or "file:line" when it has none.
std::string case_label(const Case& c);

// A result for a loaded case on `backend` before anything ran: its source, name (the
// source when the case did not load), backend and reproducer (when it loaded).
CaseResult result_label(const LoadedCase& loaded, const std::string& backend);

}  // namespace kc
