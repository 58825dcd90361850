// Checks that never apply to a case are refused when the file is read, naming the
// `checks` line and why; each refused pair is one the runner would skip on any backend,
// and checks that only some backends skip still load.
#include "kc/check_scope.h"

#include <gtest/gtest.h>

#include "kc/case_io.h"
#include "kc/checks.h"
#include "kc/registry.h"
#include "kc/runner.h"

namespace kc {
namespace {

constexpr const char* kCases[] = {
    "op: conv\ninput: {spatial: [6]}\nconv: {out_channels: 2, kernel: 3}\n",
    "op: conv_bias_relu\ninput: {spatial: [6]}\nconv: {out_channels: 2, kernel: 3, bias: true}\n",
    "op: maxpool\ninput: {spatial: [6]}\nmaxpool: {kernel: 2}\n",
    "op: maxpool\ninput: {spatial: [6]}\nmaxpool: {kernel: 2, mode: inference}\n",
    "op: stack\ninput: {spatial: [8]}\nstack: {depth: 2, layer: {conv: {out_channels: 1, kernel: 3, padding: same}}}\n",
    "op: stack\ndtype: f16\ninput: {spatial: [8]}\nstack: {depth: 2, layer: {conv: {out_channels: 1, kernel: 3, padding: same}}}\n",
};

Case load(const std::string& yaml) {
  const std::vector<LoadedCase> v = parse_cases(yaml, "t.yaml");
  EXPECT_EQ(v.size(), 1u);
  EXPECT_TRUE(v.at(0).c.ok()) << v.at(0).c.status().to_string();
  return v.at(0).c.ok() ? *v.at(0).c : Case{};
}

std::string load_error(const std::string& yaml) {
  const std::vector<LoadedCase> v = parse_cases(yaml, "t.yaml");
  return v.size() == 1 && !v[0].c.ok() ? v[0].c.status().message() : "(loaded)";
}

// What load refuses, the runner skips: on the oracle and on a candidate alike.
TEST(CheckScope, EveryRefusedCheckIsOneTheRunnerSkipsOnEveryBackend) {
  auto oracle = make_reference_backend();
  auto candidate = make_reference_as_candidate("candidate");
  int refused = 0;
  for (const char* yaml : kCases) {
    Case c = load(yaml);
    for (const CheckDef& def : check_registry()) {
      const std::string why = check_never_applies(c, def.name);
      if (why.empty()) continue;
      ++refused;
      c.checks = {std::string(def.name)};
      for (Backend* b : {oracle.get(), candidate.get()}) {
        const CaseResult r = check_case(c, *b);
        const CheckResult* check = find_check(r, def.name);
        ASSERT_NE(check, nullptr) << yaml << def.name;
        EXPECT_EQ(check->disposition, Disposition::kSkipped) << yaml << def.name << " on " << b->name() << ": " << why;
      }
    }
  }
  EXPECT_GE(refused, 40);
}

TEST(CheckScope, LoadingNamesTheChecksLineAndWhy) {
  const std::string conv = "op: conv\ninput: {spatial: [6]}\nconv: {out_channels: 2, kernel: 3}\n";
  EXPECT_EQ(load_error(conv + "checks: [shape, argmax]\n"),
            "t.yaml:4: checks: argmax never applies to this case: argmax applies to max pooling only "
            "(leave it out of checks:, or leave checks: out for every check that applies)");
  EXPECT_NE(load_error(conv + "checks: [golden]\n").find("t.yaml:4: checks: golden never applies to this case: "
                                                         "the case has no expected: tensors"),
            std::string::npos);
  EXPECT_NE(load_error(conv + "checks: [drift]\n").find("drift never applies to this case: applies to op: stack only"),
            std::string::npos);
  EXPECT_NE(load_error(std::string(kCases[4]) + "checks: [drift]\n").find("applies to f16 and bf16 stacks"),
            std::string::npos);
  EXPECT_NE(load_error(std::string(kCases[5]) + "checks: [backward]\n").find("checked op by op"), std::string::npos);
  // From defaults: (shared by cases of several kinds) refused only when none applies.
  const std::string two_pools =
      "defaults: {op: maxpool, input: {spatial: [6]}, checks: [shape, backward]}\n"
      "cases:\n  - maxpool: {kernel: 2, mode: inference}\n  - maxpool: {kernel: 2}\n";
  EXPECT_EQ(parse_cases(two_pools, "t.yaml").size(), 2u);
  for (const LoadedCase& lc : parse_cases(two_pools, "t.yaml")) EXPECT_TRUE(lc.c.ok()) << lc.c.status().to_string();
  EXPECT_NE(load_error("defaults: {checks: [golden, argmax]}\ncases:\n  - " + std::string("{op: conv, input: {spatial: [6]}, "
                       "conv: {out_channels: 2, kernel: 3}}\n")).find("t.yaml:1: checks: none of the checks this case "
                                                                 "takes from defaults: applies to it (golden: "),
            std::string::npos);
  // Skipped only on some backends (forward never runs on the oracle itself): still loads.
  EXPECT_EQ(load(conv + "checks: [forward, determinism, integrity, backward]\n").checks.size(), 4u);
  EXPECT_EQ(load(std::string(kCases[4]) + "checks: [backward]\n").checks.size(), 1u);
}

}  // namespace
}  // namespace kc
