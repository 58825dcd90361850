// candidate_call: a backend's call runs in its own environment, the judge's is back after
// it whatever the call did, a change the call left is named once per call, messages are
// cut; backend names follow the rule.
#include "backend/candidate_call.h"

#include <gtest/gtest.h>

#include <cfenv>
#include <stdexcept>

#include "kc/registry.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

TEST(CandidateCall, RestoresTheJudgeAndNamesWhatTheCallLeft) {
  pin_judge_fp_env();
  test::DelegatingBackend be("leaky");
  FpLeakWatch watch;
  const Status s = candidate_call(be, "conv_forward", [] {
    std::fesetround(FE_DOWNWARD);
    return ok_status();
  });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(current_fp_env(), judge_fp_env());
  ASSERT_EQ(watch.seen().size(), 1u);
  EXPECT_EQ(watch.seen()[0], "conv_forward left rounding toward -inf");
  candidate_call(be, "conv_forward", [] { std::fesetround(FE_DOWNWARD); });  // the same leak: named once
  EXPECT_EQ(watch.seen().size(), 1u);
}

TEST(CandidateCall, RestoresTheJudgeWhenTheCallThrows) {
  pin_judge_fp_env();
  test::DelegatingBackend be("thrower");
  FpLeakWatch watch;
  EXPECT_THROW(candidate_call(be, "conv_backward",
                              []() -> Status {
                                std::fesetround(FE_UPWARD);
                                throw std::runtime_error("x");
                              }),
               std::runtime_error);
  EXPECT_EQ(current_fp_env(), judge_fp_env());
  EXPECT_EQ(watch.seen().size(), 1u);
}

TEST(CandidateCall, RunsTheCallInTheEnvironmentItsLibraryLeft) {
  pin_judge_fp_env();
  std::fesetround(FE_TOWARDZERO);
  const FpEnv loaded = current_fp_env();
  pin_judge_fp_env();
  set_candidate_fp_env("loaded.lib", loaded);
  test::DelegatingBackend be("loaded.lib");
  FpLeakWatch watch;
  int inside = -1;
  candidate_call(be, "conv_forward", [&] { inside = std::fegetround(); });
  EXPECT_EQ(inside, FE_TOWARDZERO);
  EXPECT_EQ(current_fp_env(), judge_fp_env());
  EXPECT_TRUE(watch.seen().empty());  // it left what it was given: no finding
  set_candidate_fp_env("loaded.lib", judge_fp_env());
  EXPECT_EQ(candidate_fp_env("loaded.lib"), judge_fp_env());
}

TEST(CandidateCall, CutsLongMessagesAndCountsTheCut) {
  const Status s = cut_message(internal_error(std::string(10000, 'm')));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_LT(s.message().size(), kMaxBackendMessage + 40);
  EXPECT_NE(s.message().find("... [5904 bytes cut]"), std::string::npos);
  EXPECT_EQ(cut_message(internal_error("short")).message(), "short");
  test::DelegatingBackend be("long");
  const Status via_call = candidate_call(be, "conv_forward", [] { return internal_error(std::string(5000, 'x')); });
  EXPECT_NE(via_call.message().find("bytes cut"), std::string::npos);
}

TEST(BackendNames, FollowTheRule) {
  EXPECT_EQ(backend_name_problem("onednn.winograd"), "");
  EXPECT_EQ(backend_name_problem("my_conv+v2-rc.1"), "");
  EXPECT_NE(backend_name_problem("a,b").find("only letters, digits and ._+-"), std::string::npos);
  EXPECT_NE(backend_name_problem("two words").find("only letters"), std::string::npos);
  EXPECT_NE(backend_name_problem("new\nline").find("\\x0a"), std::string::npos);
  EXPECT_NE(backend_name_problem(std::string("nul\0", 4)).find("only letters"), std::string::npos);
  EXPECT_NE(backend_name_problem(std::string(65, 'n')).find("65 characters long, over 64"), std::string::npos);
  EXPECT_EQ(backend_name_problem(std::string(64, 'n')), "");
  EXPECT_NE(backend_name_problem("").find("empty"), std::string::npos);
  Registry r;
  EXPECT_FALSE(r.add("a b", [] { return std::unique_ptr<Backend>(); }).ok());
  EXPECT_TRUE(r.add("ok", [] { return std::unique_ptr<Backend>(); }).ok());
  EXPECT_FALSE(r.add("ok", [] { return std::unique_ptr<Backend>(); }).ok());
  EXPECT_EQ(r.problems().size(), 2u);
  EXPECT_EQ(r.names(), std::vector<std::string>{"ok"});
}

}  // namespace
}  // namespace kc
