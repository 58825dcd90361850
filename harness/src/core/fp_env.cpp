// FpEnv on x86-64 (MXCSR and the x87 control word), aarch64 (FPCR) and, elsewhere, the
// rounding mode alone. Bit layouts: Intel SDM vol. 1, 10.2.3 and 8.1.5; Arm ARM, FPCR.
#include "core/fp_env.h"

#include <cfenv>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define KC_FP_X86 1
#elif defined(__aarch64__)
#define KC_FP_ARM 1
#endif

namespace kc {
namespace {

#if KC_FP_X86
constexpr uint32_t kSseControl = 0xFFC0;  // DAZ, masks, rounding, FTZ: not the flags (bits 0-5)
constexpr uint32_t kSseJudge = 0x1F80;    // every exception masked, round to nearest
constexpr uint32_t kFtz = 1u << 15, kDaz = 1u << 6, kSseRoundShift = 13, kSseMaskShift = 7;
constexpr uint32_t kX87Control = 0x0F3F;  // masks, precision, rounding
constexpr uint32_t kX87Judge = 0x033F;    // every exception masked, 64-bit precision, nearest (0x037F as read)
constexpr uint32_t kX87RoundShift = 10, kX87PrecisionShift = 8;
#elif KC_FP_ARM
constexpr uint32_t kFtz = 1u << 24, kFz16 = 1u << 19, kArmRoundShift = 22;
constexpr uint32_t kArmTraps = 0x9F00;  // IOE DZE OFE UFE IXE (bits 8-12), IDE (bit 15)
constexpr uint32_t kArmControl = kFtz | kFz16 | (3u << kArmRoundShift) | kArmTraps | (1u << 25);  // 25: DN
#endif

// Rounding modes in the order both x86 fields use: nearest, down, up, toward zero.
const char* rounding_name(uint32_t rc) {
  static const char* const names[] = {"to nearest", "toward -inf", "toward +inf", "toward zero"};
  return names[rc & 3];
}

void add(std::vector<std::string>& out, std::string what) { out.push_back(std::move(what)); }

// "left X set" or "left X cleared" when `bit` differs.
void bit_change(std::vector<std::string>& out, uint32_t given, uint32_t left, uint32_t bit, const char* name) {
  if ((given & bit) == (left & bit)) return;
  add(out, std::string("left ") + name + ((left & bit) ? " set" : " cleared"));
}

#if KC_FP_X86
const char* const kExceptions[] = {"invalid-operation", "denormal-operand", "divide-by-zero",
                                   "overflow",          "underflow",        "inexact"};

void mask_changes(std::vector<std::string>& out, uint32_t given, uint32_t left, uint32_t shift, const char* unit) {
  for (uint32_t e = 0; e < 6; ++e) {
    const uint32_t bit = 1u << (shift + e);
    if ((given & bit) == (left & bit)) continue;
    add(out, std::string("left the ") + unit + kExceptions[e] + " exception " + ((left & bit) ? "masked" : "unmasked"));
  }
}

void describe_x86(std::vector<std::string>& out, const FpEnv& g, const FpEnv& l) {
  if ((l.sse & (kFtz | kDaz)) == (kFtz | kDaz) && (g.sse & (kFtz | kDaz)) == 0) {
    add(out, "left FTZ/DAZ set");
  } else {
    bit_change(out, g.sse, l.sse, kFtz, "FTZ (flush to zero)");
    bit_change(out, g.sse, l.sse, kDaz, "DAZ (denormals are zero)");
  }
  const uint32_t rg = (g.sse >> kSseRoundShift) & 3, rl = (l.sse >> kSseRoundShift) & 3;
  if (rg != rl) add(out, std::string("left rounding ") + rounding_name(rl));
  mask_changes(out, g.sse, l.sse, kSseMaskShift, "");
  const uint32_t xg = (g.x87 >> kX87RoundShift) & 3, xl = (l.x87 >> kX87RoundShift) & 3;
  if (xg != xl && !(rg != rl && xl == rl)) {  // fesetround() sets both: one phrase then
    add(out, std::string("left the x87 rounding ") + rounding_name(xl));
  }
  static const char* const precision[] = {"24 bits", "(reserved)", "53 bits", "64 bits"};
  const uint32_t pg = (g.x87 >> kX87PrecisionShift) & 3, pl = (l.x87 >> kX87PrecisionShift) & 3;
  if (pg != pl) add(out, std::string("left the x87 precision at ") + precision[pl]);
  mask_changes(out, g.x87, l.x87, 0, "x87 ");
}
#endif

#if KC_FP_ARM
uint32_t read_fpcr() {
  uint64_t v = 0;
  asm volatile("mrs %0, fpcr" : "=r"(v));
  return static_cast<uint32_t>(v);
}
void write_fpcr(uint32_t v) {
  const uint64_t w = v;
  asm volatile("msr fpcr, %0" : : "r"(w));
}

void describe_arm(std::vector<std::string>& out, const FpEnv& g, const FpEnv& l) {
  bit_change(out, g.sse, l.sse, kFtz, "FZ (flush to zero)");
  bit_change(out, g.sse, l.sse, kFz16, "FZ16 (flush half precision to zero)");
  bit_change(out, g.sse, l.sse, 1u << 25, "DN (default NaN)");
  static const uint32_t to_x86[] = {0, 2, 1, 3};  // RN, RP, RM, RZ as nearest, down, up, zero
  const uint32_t rg = (g.sse >> kArmRoundShift) & 3, rl = (l.sse >> kArmRoundShift) & 3;
  if (rg != rl) add(out, std::string("left rounding ") + rounding_name(to_x86[rl]));
  if ((g.sse & kArmTraps) != (l.sse & kArmTraps)) add(out, "left floating-point exception traps changed");
}
#endif

}  // namespace

FpEnv current_fp_env() {
  FpEnv e;
  e.rounding = std::fegetround();
#if KC_FP_X86
  e.sse = _mm_getcsr() & kSseControl;
  uint16_t cw = 0;
  asm volatile("fnstcw %0" : "=m"(cw));
  e.x87 = cw & kX87Control;
#elif KC_FP_ARM
  e.sse = read_fpcr() & kArmControl;
#endif
  return e;
}

void set_fp_env(const FpEnv& env) {
#if KC_FP_X86
  _mm_setcsr(env.sse & kSseControl);                                            // the flags (bits 0-5) cleared
  const uint16_t cw = static_cast<uint16_t>((env.x87 & kX87Control) | 0x0040);  // bit 6 reads as 1
  asm volatile("fnclex\n\tfldcw %0" : : "m"(cw));
#elif KC_FP_ARM
  write_fpcr((read_fpcr() & ~kArmControl) | (env.sse & kArmControl));
#else
  std::fesetround(env.rounding);
#endif
  std::feclearexcept(FE_ALL_EXCEPT);
}

FpEnv judge_fp_env() {
  FpEnv e;
  e.rounding = FE_TONEAREST;
#if KC_FP_X86
  e.sse = kSseJudge;
  e.x87 = kX87Judge;
#endif
  return e;  // aarch64: FPCR 0 is nearest, no FZ, no traps
}

void pin_judge_fp_env() { set_fp_env(judge_fp_env()); }

std::string describe_fp_change(const FpEnv& given, const FpEnv& left) {
  std::vector<std::string> parts;
#if KC_FP_X86
  describe_x86(parts, given, left);
#elif KC_FP_ARM
  describe_arm(parts, given, left);
#else
  if (given.rounding != left.rounding) parts.push_back("left the rounding mode changed");
#endif
  if (parts.empty() && !(given == left)) parts.push_back("left the floating-point environment changed");
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::string describe_fp_env(const FpEnv& env) {
  std::string s = describe_fp_change(judge_fp_env(), env);
  // "left X set" reads as the state itself without its verb.
  for (size_t at = s.find("left "); at != std::string::npos; at = s.find("left ", at)) s.erase(at, 5);
  return s;
}

}  // namespace kc
