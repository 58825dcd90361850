// The project's own test binary: my.conv2d linked in, every case file on the command
// line checked on it in this process (no kcheck, no plugin); kcheck's summary and exit
// code (0 when everything passed or was skipped).
#include <cstdio>
#include <vector>

#include "kc/case_io.h"
#include "kc/report.h"
#include "kc/runner.h"
#include "my_backend.h"

int main(int argc, char** argv) {
  std::vector<kc::CaseResult> results;
  for (int i = 1; i < argc; ++i) {
    for (const kc::LoadedCase& c : kc::load_case_file(argv[i]))
      results.push_back(kc::check_loaded(c, *make_my_backend()));
  }
  kc::RunInfo info;
  info.command = "my_check";
  std::fputs(kc::summary_text(results, info).c_str(), stdout);
  return results.empty() ? 2 : kc::exit_code(results);
}
