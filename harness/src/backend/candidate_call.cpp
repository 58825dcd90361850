// The table of candidate environments and the thread's leak watches.
#include "backend/candidate_call.h"

#include <algorithm>
#include <map>

namespace kc {
namespace {

std::map<std::string, FpEnv>& table() {
  static std::map<std::string, FpEnv> t;
  return t;
}

thread_local FpLeakWatch* current_leak_watch = nullptr;

}  // namespace

void set_candidate_fp_env(const std::string& backend, const FpEnv& env) {
  if (env == judge_fp_env()) {
    table().erase(backend);
  } else {
    table()[backend] = env;
  }
}

FpEnv candidate_fp_env(const std::string& backend) {
  const auto it = table().find(backend);
  return it == table().end() ? judge_fp_env() : it->second;
}

FpLeakWatch::FpLeakWatch() : outer_(current_leak_watch) { current_leak_watch = this; }
FpLeakWatch::~FpLeakWatch() {
  current_leak_watch = outer_;
  if (outer_ != nullptr) {
    for (const std::string& s : seen_) outer_->add(s);
  }
}
void FpLeakWatch::add(const std::string& leak) {
  if (std::find(seen_.begin(), seen_.end(), leak) == seen_.end()) seen_.push_back(leak);
}

std::string cut_text(std::string text) {
  if (text.size() <= kMaxBackendMessage) return text;
  size_t keep = kMaxBackendMessage;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;  // whole UTF-8 characters
  const size_t cut = text.size() - keep;
  text.resize(keep);
  return text + "... [" + std::to_string(cut) + " bytes cut]";
}

Status cut_message(Status s) {
  if (s.message().size() <= kMaxBackendMessage) return s;
  return Status(s.code(), cut_text(s.message()));
}

namespace detail {

FpEnv enter_candidate(const Backend& backend) {
  // Most backends run in the judge's environment: skip the map when none is recorded.
  const FpEnv env = table().empty() ? judge_fp_env() : candidate_fp_env(backend.name());
  set_fp_env(env);
  return env;
}

void leave_candidate(const char* call, const FpEnv& given) {
  const FpEnv left = current_fp_env();
  if (left == given) {
    if (!(given == judge_fp_env())) pin_judge_fp_env();
    return;
  }
  pin_judge_fp_env();
  if (current_leak_watch != nullptr) current_leak_watch->add(std::string(call) + " " + describe_fp_change(given, left));
}

}  // namespace detail
}  // namespace kc
