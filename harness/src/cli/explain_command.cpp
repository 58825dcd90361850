// kcheck explain CASE: what a case asks for, resolved, as its op module explains it
// (shapes, padding per dim, FLOPs, bytes moved, memory for a training step; for a stack
// its receptive field and border erosion), what the GPU backends would run for it (the
// CUTLASS engine's kernel per pass, or why the direct kernels), and the one-line reproducer.
#include <cstdio>
#include <string>

#include "backend/build_info.h"
#include "cli.h"
#include "core/validate.h"
#include "kc/case_io.h"
#include "kc/report.h"
#include "ops/op_module.h"

namespace kc::cli {

int explain_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(
        "usage: kcheck explain CASE\n"
        "  what each case in the file asks for, resolved: shapes, padding per dimension, FLOPs, bytes,\n"
        "  memory for a training step, and for a stack the layers, receptive field and erosion;\n"
        "  the kernel cuda and cuda.direct would run for each conv pass (or why not CUTLASS).\n"
        "  Exit 0, or 2 when a case is invalid (it is shown with the reason).\n",
        stdout);
    return 0;
  }
  if (args.size() != 1) return usage_error("explain: give exactly one case file");
  int code = 0;
  for (const LoadedCase& lc : load_case_file(args[0])) {
    std::printf("%s:%d\n", terminal_safe(one_line(lc.file)).c_str(), lc.line);
    if (!lc.c.ok()) {
      std::printf("  INVALID: %s\n", terminal_safe(file_on_one_line(lc.c.status().message(), lc.file)).c_str());
      if (lc.unvalidated) {  // what the op shows of a case that failed its geometry
        std::visit([&](const auto& p) { explain_refused(*lc.unvalidated, p); }, lc.unvalidated->op);
      }
      code = 2;
      continue;
    }
    const Case& c = *lc.c;
    std::printf("  %s %s, accumulation %s%s%s\n", std::string(op_name(c.op)).c_str(),
                std::string(dtype_name(c.dtype)).c_str(), std::string(dtype_name(accumulation_of(c))).c_str(),
                c.accumulation ? "" : " (default)",
                c.name.empty() ? "" : ("  \"" + terminal_safe(c.name) + "\"").c_str());
    std::visit([&](const auto& p) { explain(c, p); }, c.op);
    for (const std::string& line : builtin_kernel_plans(c)) std::printf("  %s\n", terminal_safe(line).c_str());
    std::printf("  reproduce: %s\n", case_to_one_line(c).c_str());
  }
  return code;
}

}  // namespace kc::cli
