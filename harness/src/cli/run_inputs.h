// kcheck run's inputs (run_inputs.cpp): the case files under the paths, each once, the
// folders that could not be listed, and every file the scans passed over, by reason.
#pragma once

#include <string>
#include <vector>

#include "kc/case_io.h"

namespace kc::cli {

// The case files under the paths, each once (a file named twice or under two given
// folders runs once): regression cases first, then in sorted order. Folders that could
// not be listed are `unlisted`, INVALID with the reason; files passed over are counted
// once each, however many paths reach them.
struct Found {
  std::vector<std::string> files;
  std::vector<LoadedCase> unlisted;
  PassedOver passed_over;
};

// `failures`: the report's failures folder (empty without --report), whose own
// reproducers a scan leaves out (counted as passed over).
Found find_all(const std::vector<std::string>& paths, const std::string& failures);

// Every case of the files, each with its sibling NAME.expect applied, then the unlisted.
std::vector<LoadedCase> load_all(Found found);

}  // namespace kc::cli
