// The padding check compares a case with the same op on an explicitly padded input; when
// that padded case is over the host-memory cap although the case is not, the check is
// SKIPPED with the reason (a harness limit), never FAILED.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kc/runner.h"
#include "support/case_builders.h"

namespace kc {
namespace {

TEST(PaddingCheck, PaddedCaseOverTheMemoryCapIsSkippedNotFailed) {
  ASSERT_EQ(setenv("KC_MAX_CASE_BYTES", "1536M", 1), 0);
  // One input element, padding 120 and stride 200 per dim: 2x2x2 outputs, a padded
  // input of 201^3 elements (with the checks' copies, the case is estimated at about
  // 1.1 GB and the padded case at about 2 GB).
  Case c = test::conv_case({.spatial = {1, 1, 1},
                            .kernel = {1, 1, 1},
                            .stride = {200, 200, 200},
                            .padding = test::pad_kind(PadKind::kExplicit),
                            .dtype = DType::kF32});
  std::get<ConvParams>(c.op).padding.pairs = {{120, 120}, {120, 120}, {120, 120}};
  c.checks = {"shape", "padding"};
  auto ref = make_reference_backend();
  const CaseResult r = check_case(c, *ref);
  unsetenv("KC_MAX_CASE_BYTES");
  ASSERT_NE(r.disposition, Disposition::kInvalid) << r.message;
  const CheckResult* p = find_check(r, "padding");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->disposition, Disposition::kSkipped) << p->message;
  EXPECT_NE(p->message.find("explicitly padded case it compares with is too large"), std::string::npos) << p->message;
  EXPECT_NE(p->message.find("over the cap"), std::string::npos) << p->message;
}

}  // namespace
}  // namespace kc
