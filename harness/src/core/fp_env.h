// The floating-point environment of the judge and of each candidate (docs/plugins.md,
// "Trust"). The oracle, the checks and the tolerance model run in
// the judge's: round to nearest, no flush-to-zero, no denormals-are-zero, every exception
// masked. A candidate runs in the environment its library set when it loaded (a library built
// with -ffast-math sets FTZ/DAZ from a constructor) and must leave the environment as it
// found it. Only control bits count: the sticky exception flags any arithmetic raises do not.
#pragma once

#include <cstdint>
#include <string>

namespace kc {

struct FpEnv {
  uint32_t sse = 0;  // x86-64: MXCSR's control bits (rounding, FTZ, DAZ, masks); aarch64: FPCR
  uint32_t x87 = 0;  // x86-64: the x87 control word (rounding, precision, masks); elsewhere 0
  int rounding = 0;  // fegetround(): the only part read where neither register is known
  bool operator==(const FpEnv&) const = default;
};

// The environment of the calling thread now (control bits only).
FpEnv current_fp_env();
// Sets the calling thread's environment; the sticky flags are cleared.
void set_fp_env(const FpEnv& env);
// Round to nearest, no FTZ/DAZ, every exception masked.
FpEnv judge_fp_env();
// set_fp_env(judge_fp_env()).
void pin_judge_fp_env();

// What a call changed from `given` to `left`, in words ("left FTZ/DAZ set", "left rounding
// toward +inf", "left the invalid-operation exception unmasked", ...); empty when nothing.
std::string describe_fp_change(const FpEnv& given, const FpEnv& left);
// The environment in words when it is not the judge's ("FTZ/DAZ set"), else empty.
std::string describe_fp_env(const FpEnv& env);

}  // namespace kc
