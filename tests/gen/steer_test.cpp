// The helper process the generators steer data seeds in (gen/steer.h): it answers as
// the question would here, and a crash or a hang of the oracle on one case answers -1
// for that case alone (the generating process goes on, and the next case gets a new
// helper).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "gen/steer.h"

namespace kc::gen::detail {
namespace {

Case with_seed(uint64_t seed) {
  Case c;
  c.name = "steer";
  c.input = {1, 1, {4}};
  c.op = ConvParams{.out_channels = 1, .kernel = {3}};
  c.data.seed = seed;
  return c;
}

// The question: the seed mod 7, but a crash on seed 13 and a hang on seed 21.
int question(const Case& c) {
  if (c.data.seed == 13) ::raise(SIGSEGV);
  if (c.data.seed == 21) ::sleep(30);
  return static_cast<int>(c.data.seed % 7);
}

TEST(SteerHelper, AnswersInAChildAsTheQuestionWouldHere) {
  CaseOracleHelper helper(question, 20);
  for (uint64_t seed : {0u, 1u, 6u, 9u, 100u}) EXPECT_EQ(helper.ask(with_seed(seed)), question(with_seed(seed)));
  EXPECT_EQ(helper.restarts(), 0);
}

TEST(SteerHelper, ACrashOrAHangAnswersMinusOneForThatCaseAndTheNextCaseIsAnswered) {
  CaseOracleHelper helper(question, 1);
  EXPECT_EQ(helper.ask(with_seed(13)), -1);  // this process would have died here
  EXPECT_EQ(helper.restarts(), 1);
  EXPECT_EQ(helper.ask(with_seed(10)), 3);
  EXPECT_EQ(helper.ask(with_seed(21)), -1);  // and waited 30 s here
  EXPECT_EQ(helper.restarts(), 2);
  EXPECT_EQ(helper.ask(with_seed(12)), 5);
}

// A forked process (a fuzz worker) does not share its parent's helper: it starts its own,
// and the parent's goes on answering.
TEST(SteerHelper, AForkedProcessUsesItsOwnHelper) {
  CaseOracleHelper helper(question, 20);
  ASSERT_EQ(helper.ask(with_seed(2)), 2);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(helper.ask(with_seed(4)) == 4 && helper.ask(with_seed(5)) == 5 ? 0 : 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(helper.ask(with_seed(3)), 3);
  EXPECT_EQ(helper.restarts(), 0);
}

}  // namespace
}  // namespace kc::gen::detail
