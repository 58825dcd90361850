// RunProgress (progress.h): counts, elapsed time and a linear estimate of the rest.
#include "progress.h"

#include <chrono>

#include "cli.h"

namespace kc::cli {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool failed(Disposition d) {
  return d == Disposition::kFailed || d == Disposition::kMistrusted || d == Disposition::kCrashed ||
         d == Disposition::kTimeout || d == Disposition::kInvalid || d == Disposition::kXpass;
}

}  // namespace

std::string duration_text(double seconds) {
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%ld s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, s / 60 % 60);
  }
  return buf;
}

RunProgress::RunProgress(std::FILE* out, bool terminal, double period, std::function<double()> now)
    : out_(out), terminal_(terminal), period_(period), now_(now ? std::move(now) : steady_seconds) {
  start_ = last_line_ = now_();
}

std::string RunProgress::status(size_t done, size_t total) const {
  const double elapsed = now_() - start_;
  std::string s = std::to_string(done) + "/" + std::to_string(total) + " results, " + std::to_string(failures_) +
                  (failures_ == 1 ? " failure, " : " failures, ") + duration_text(elapsed) + " elapsed";
  if (done > 0 && done < total) {
    s += ", about " + duration_text(elapsed / static_cast<double>(done) * static_cast<double>(total - done)) + " left";
  }
  return s;
}

void RunProgress::operator()(size_t done, size_t total, const CaseResult& r) {
  failures_ += failed(r.disposition);
  if (terminal_) {
    std::fprintf(out_, "\r\033[K[%s] %s [%s]", status(done, total).c_str(),
                 terminal_safe(one_line(r.case_name.substr(0, 50))).c_str(),
                 terminal_safe(one_line(r.backend)).c_str());
    if (done == total) std::fputc('\n', out_);
    std::fflush(out_);
    return;
  }
  if (now_() - last_line_ < period_ || done == total) return;
  last_line_ = now_();
  std::fprintf(out_, "kcheck: %s\n", status(done, total).c_str());
  std::fflush(out_);
}

}  // namespace kc::cli
