// The check table: every row bound to its code in table order; the ops it lists agree
// with the op modules' rules on real cases; the texts derived from it. Checks that never
// apply to a case are refused when the file is read, naming the `checks` line and why;
// each refused pair is one the runner would skip on any backend, and checks only some
// backends skip still load.
#include "core/check_table.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "checks/checks.h"
#include "kc/case_io.h"
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
    "op: stack\ndtype: f16\ninput: {spatial: [8]}\nstack: {depth: 2, layer: {conv: {out_channels: 1, kernel: 3, "
    "padding: same}}}\n",
    "op: avgpool\ninput: {spatial: [6]}\navgpool: {kernel: 2}\n",
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
      const std::string why = check_never_applies(c, def.name());
      if (why.empty()) continue;
      ++refused;
      c.checks = {std::string(def.name())};
      for (Backend* b : {oracle.get(), candidate.get()}) {
        const CaseResult r = check_case(c, *b);
        const CheckResult* check = find_check(r, def.name());
        ASSERT_NE(check, nullptr) << yaml << def.name();
        EXPECT_EQ(check->disposition, Disposition::kSkipped)
            << yaml << def.name() << " on " << b->name() << ": " << why;
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
  EXPECT_NE(load_error(conv + "checks: [golden]\n")
                .find("t.yaml:4: checks: golden never applies to this case: "
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
  // Each case keeps those that apply to it, so that written back alone it reads again.
  EXPECT_EQ(parse_cases(two_pools, "t.yaml")[0].c->checks, std::vector<std::string>{"shape"});
  EXPECT_EQ(parse_cases(two_pools, "t.yaml")[1].c->checks, (std::vector<std::string>{"shape", "backward"}));
  EXPECT_NE(load_error("defaults: {checks: [golden, argmax]}\ncases:\n  - " +
                       std::string("{op: conv, input: {spatial: [6]}, "
                                   "conv: {out_channels: 2, kernel: 3}}\n"))
                .find("t.yaml:1: checks: none of the checks this case "
                      "takes from defaults: applies to it (golden: "),
            std::string::npos);
  // Skipped only on some backends (forward never runs on the oracle itself): still loads.
  EXPECT_EQ(load(conv + "checks: [forward, determinism, integrity, backward]\n").checks.size(), 4u);
  EXPECT_EQ(load(std::string(kCases[4]) + "checks: [backward]\n").checks.size(), 1u);
}

TEST(CheckTable, EveryRowIsBoundToItsCodeInTableOrder) {
  const std::vector<CheckDef>& registry = check_registry();
  ASSERT_EQ(registry.size(), check_table().size());
  for (size_t i = 0; i < registry.size(); ++i) {
    EXPECT_EQ(registry[i].name(), check_table()[i].name);
    EXPECT_NE(registry[i].run, nullptr) << registry[i].name();
    EXPECT_EQ(kc::find_check(registry[i].name()), &check_table()[i]);
  }
  EXPECT_EQ(kc::find_check("states"), nullptr);
}

// The ops a row lists (ops_checked_by, from each op's default params) are those on
// which some case of the op lets the check apply.
TEST(CheckTable, ListedOpsAgreeWithTheScopeRules) {
  const std::pair<std::string_view, std::vector<const char*>> kinds[] = {{"conv", {kCases[0]}},
                                                                         {"conv_bias_relu", {kCases[1]}},
                                                                         {"maxpool", {kCases[2], kCases[3]}},
                                                                         {"stack", {kCases[4], kCases[5]}},
                                                                         {"avgpool", {kCases[6]}}};
  for (const CheckInfo& info : check_table()) {
    const std::vector<std::string_view> listed = ops_checked_by(info);
    for (const auto& [op, yamls] : kinds) {
      bool applies = false;
      for (const char* yaml : yamls) {
        Case c = load(yaml);
        if (!is_stack(c)) c.expected["y"] = Tensor{};  // golden's own condition
        applies = applies || check_never_applies(c, info.name).empty();
      }
      const bool in_list = std::find(listed.begin(), listed.end(), op) != listed.end();
      EXPECT_EQ(applies, in_list) << info.name << " on op " << op;
    }
  }
}

TEST(CheckTable, TextsAreDerivedFromTheTable) {
  EXPECT_EQ(oracle_self_reason(),
            "the oracle is not compared with itself; on the reference the self-checks are shape, gradcheck, adjoint, "
            "weight_share, argmax, padding and golden (on a stack: shape, checkpoint, influence and drift)");
  EXPECT_EQ(check_never_applies(load(kCases[4]), "forward"),
            "checks a single op; a stack is checked by shape, backward, checkpoint, influence and drift");
  EXPECT_EQ(check_never_applies(load(kCases[0]), "nonsense"), "no check is named nonsense");
}

// judges_backward reads the table's column: a list judges backward values when it names
// a check that compares them (padding on a conv only, golden with an expected gradient).
TEST(CheckTable, JudgesBackwardFollowsTheTable) {
  Case conv = load(kCases[0]);
  Case pool = load(kCases[2]);
  const auto judges = [](Case c, std::vector<std::string> checks) {
    c.checks = std::move(checks);
    return judges_backward(c);
  };
  EXPECT_TRUE(judges(conv, {}));
  for (const char* name : {"backward", "gradcheck", "adjoint", "weight_share", "padding"}) {
    EXPECT_TRUE(judges(conv, {name})) << name;
  }
  EXPECT_TRUE(judges(pool, {"argmax"}));
  EXPECT_FALSE(judges(pool, {"padding"}));
  for (const char* name : {"shape", "forward", "determinism", "integrity", "golden"}) {
    EXPECT_FALSE(judges(conv, {name})) << name;
  }
  conv.expected["dw"] = Tensor{};
  EXPECT_TRUE(judges(conv, {"golden"}));
}

}  // namespace
}  // namespace kc
