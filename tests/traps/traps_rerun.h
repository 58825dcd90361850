// kc_traps_e2e rerun (traps_rerun.cpp): the failure reproducers of trap runs, run again.
#pragma once

#include <string>
#include <vector>

namespace kc::traps {

// kc_traps_e2e rerun KCHECK DIR NAME...: every reproducer in DIR/trap.NAME/failures is run
// again by its `# rerun:` line (bash, KCHECK for `kcheck`) and must end as its header
// says, exit 1; 0 when all of them do and each run had some.
int rerun_reproducers(const std::string& kcheck, const std::string& dir, const std::vector<std::string>& names);

}  // namespace kc::traps
