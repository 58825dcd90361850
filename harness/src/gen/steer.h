// A helper process that answers a question about a case by running the oracle on its
// data, for the generators' seed steering (case_gen.cpp): the generators run in the
// process that generates (kcheck fuzz's parent, kcheck gen), not in a worker that
// isolates a crash, so the oracle runs in this child instead. A crash of the child, or
// no answer within the time limit, answers -1 for that case (the caller keeps what it
// drew, and the case's own isolated run then reports what the oracle does on it); the
// next question starts a new child. Where no child can be started, the question is
// answered in this process.
#pragma once

#include <sys/types.h>

#include <functional>

#include "kc/case.h"

namespace kc::gen::detail {

class CaseOracleHelper {
 public:
  // answer(c) runs in the child; its result must fit in a signed char (-1 .. 127).
  CaseOracleHelper(std::function<int(const Case&)> answer, int seconds);
  ~CaseOracleHelper();
  CaseOracleHelper(const CaseOracleHelper&) = delete;
  CaseOracleHelper& operator=(const CaseOracleHelper&) = delete;

  int ask(const Case& c);
  int restarts() const { return restarts_; }  // children lost (crashed or timed out)

 private:
  bool start();
  void stop();
  [[noreturn]] void serve(int fd) const;

  std::function<int(const Case&)> answer_;
  int seconds_;
  pid_t owner_ = -1;  // the process that started the child (a forked worker has its own)
  pid_t child_ = -1;
  int fd_ = -1;       // our end of the socket pair
  int restarts_ = 0;
};

}  // namespace kc::gen::detail
