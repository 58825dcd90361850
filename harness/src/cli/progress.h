// How far a long kcheck run has got, on stderr: on a terminal one line rewritten after
// every result (results done of the total, failures so far, time elapsed and an estimate
// of the time left, the latest case); elsewhere (a CI log) a line every `period` seconds.
// Failures are counted before waivers apply: a waived failure counts here.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "kc/result.h"

namespace kc::cli {

class RunProgress {
 public:
  // `now` gives seconds on a steady clock (a test gives its own).
  RunProgress(std::FILE* out, bool terminal, double period = 30.0, std::function<double()> now = nullptr);
  void operator()(size_t done, size_t total, const CaseResult& r);

 private:
  std::string status(size_t done, size_t total) const;

  std::FILE* out_;
  bool terminal_;
  double period_;
  std::function<double()> now_;
  double start_, last_line_;
  size_t failures_ = 0;
};

// "45 s", "3 min 05 s", "1 h 02 min".
std::string duration_text(double seconds);

}  // namespace kc::cli
