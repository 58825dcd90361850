// apply_waivers (waivers.h).
#include "run/waivers.h"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kc {
namespace {

// The case's file, without its ":line".
std::string file_of(const std::string& source) {
  const size_t colon = source.rfind(':');
  return colon == std::string::npos ? source : source.substr(0, colon);
}

bool glob(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool names(const Waiver& w, const CaseResult& r, const CheckResult& c) {
  return (glob(w.case_glob, r.case_name) || glob(w.case_glob, file_of(r.source))) && glob(w.backend_glob, r.backend) &&
         w.check == c.name;
}

// What the waiver does to the check: XFAIL for a failure it describes, XPASS for a pass
// (an intermittent one leaves a pass as it is and counts it).
bool apply_one(const Waiver& w, CheckResult& c, WaiverOutcome& out) {
  const bool failed = c.disposition == Disposition::kFailed || c.disposition == Disposition::kMistrusted;
  if (failed && (w.diagnosis.empty() || c.message.find(w.diagnosis) != std::string::npos)) {
    c.disposition = Disposition::kXfail;
    c.message = "waived (" + w.source + ": " + w.reason + "): " + c.message;
    return true;
  }
  if (c.disposition == Disposition::kPassed && w.intermittent) {
    ++out.intermittent_passed;
    return true;
  }
  if (c.disposition == Disposition::kPassed) {
    c.disposition = Disposition::kXpass;
    c.message = "a waived failure did not happen (" + w.source + ": " + w.reason + "); remove the waiver";
    return true;
  }
  return false;
}

}  // namespace

const std::vector<std::string>& this_cpu_flags() {
  static const std::vector<std::string> flags = [] {
    std::vector<std::string> out;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("flags", 0) != 0) continue;
      std::istringstream words(line.substr(line.find(':') == std::string::npos ? line.size() : line.find(':') + 1));
      for (std::string w; words >> w;) out.push_back(w);
      break;  // every core lists the same flags
    }
    return out;
  }();
  return flags;
}

WaiverOutcome apply_waivers(std::vector<CaseResult>& results, const std::vector<Waiver>& waivers,
                            const std::string& today) {
  return apply_waivers(results, waivers, today, this_cpu_flags());
}

WaiverOutcome apply_waivers(std::vector<CaseResult>& results, const std::vector<Waiver>& waivers,
                            const std::string& today, const std::vector<std::string>& cpu_flags) {
  WaiverOutcome out;
  std::vector<char> used(waivers.size(), 0), live(waivers.size(), 1);
  for (size_t i = 0; i < waivers.size(); ++i) {
    const std::string& cpu = waivers[i].cpu;
    if (!cpu.empty() && std::find(cpu_flags.begin(), cpu_flags.end(), cpu) == cpu_flags.end()) {
      live[i] = 0;
      ++out.other_cpu;
      continue;
    }
    if (!waivers[i].expires.empty() && waivers[i].expires < today) {
      live[i] = 0;
      out.expired.push_back(waivers[i].source + " (expired " + waivers[i].expires + "): " + waivers[i].reason);
    }
  }
  for (CaseResult& r : results) {
    bool changed = false;
    for (CheckResult& c : r.checks) {
      for (size_t i = 0; i < waivers.size(); ++i) {
        if (!live[i] || !names(waivers[i], r, c) || !apply_one(waivers[i], c, out)) continue;
        used[i] = 1;
        changed = true;
        break;
      }
    }
    if (changed) roll_up(r);
  }
  for (size_t i = 0; i < waivers.size(); ++i) {
    if (!live[i] || used[i]) continue;
    const Waiver& w = waivers[i];
    const bool in_run = std::any_of(results.begin(), results.end(), [&](const CaseResult& r) {
      return (glob(w.case_glob, r.case_name) || glob(w.case_glob, file_of(r.source))) &&
             glob(w.backend_glob, r.backend);
    });
    if (!in_run) {
      ++out.unmatched_elsewhere;
      continue;
    }
    out.unmatched.push_back(w.source + ": case " + w.case_glob + ", backend " + w.backend_glob + ", check " + w.check);
  }
  return out;
}

std::string waivers_text(const WaiverOutcome& outcome, const std::vector<CaseResult>& results, bool any) {
  if (!any) return {};
  int xfail = 0, xpass = 0;
  for (const CaseResult& r : results) {
    xfail += r.disposition == Disposition::kXfail;
    xpass += r.disposition == Disposition::kXpass;
  }
  std::string s = "waivers: " + std::to_string(xfail) + " XFAIL, " + std::to_string(xpass) + " XPASS\n";
  for (const std::string& e : outcome.expired) s += "  expired, ignored: " + e + "\n";
  for (const std::string& u : outcome.unmatched) s += "  matched nothing: " + u + "\n";
  if (outcome.unmatched_elsewhere > 0) {
    s += "  " + std::to_string(outcome.unmatched_elsewhere) + " waiver(s) for cases or backends not in this run\n";
  }
  if (outcome.intermittent_passed > 0) {
    s += "  " + std::to_string(outcome.intermittent_passed) +
         " check(s) an intermittent waiver names passed this time (not XPASS)\n";
  }
  if (outcome.other_cpu > 0) {
    s += "  " + std::to_string(outcome.other_cpu) + " waiver(s) for CPUs with a flag this one lacks, not applied\n";
  }
  return s;
}

}  // namespace kc
