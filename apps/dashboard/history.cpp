#include "history.h"

#include <algorithm>
#include <set>

namespace kc::bench {

std::string Sample::chart_key() const {
  std::string k = case_name;
  if (!op.empty()) k += " / " + op;
  if (!mode.empty()) k += " / " + mode;
  if (!dtype.empty()) k += " " + dtype;
  return k;
}

void order_runs(std::vector<BenchRun>& runs) {
  std::stable_sort(runs.begin(), runs.end(), [](const BenchRun& a, const BenchRun& b) {
    if (a.date.empty() || b.date.empty()) return !a.date.empty() && b.date.empty();
    return a.date < b.date;
  });
}

std::string run_label(const BenchRun& run) {
  if (!run.commit.empty() && run.commit != "unknown")
    return run.commit.substr(0, 12) + (run.commit.find("+dirty") != std::string::npos ? "+dirty" : "");
  if (!run.recorded.empty()) return run.recorded.substr(0, 12);
  return run.source;
}

std::vector<Machine> group_by_machine(const std::vector<BenchRun>& runs) {
  std::vector<Machine> machines;
  for (const BenchRun& r : runs) {
    auto it = std::find_if(machines.begin(), machines.end(), [&](const Machine& m) { return m.key == r.machine; });
    if (it == machines.end()) it = machines.insert(machines.end(), Machine{r.machine, {}});
    it->runs.push_back(&r);
  }
  return machines;
}

std::vector<std::string> chart_keys(const Machine& m) {
  std::set<std::string> keys;
  for (const BenchRun* r : m.runs) {
    for (const Sample& s : r->samples) keys.insert(s.chart_key());
  }
  return {keys.begin(), keys.end()};
}

std::vector<std::string> chart_backends(const Machine& m, const std::string& key) {
  std::set<std::string> names;
  std::string peer;
  for (const BenchRun* r : m.runs) {
    for (const Sample& s : r->samples) {
      if (s.chart_key() != key) continue;
      names.insert(s.backend);
      if (!s.peer.empty()) peer = s.peer;
    }
  }
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n != peer) out.push_back(n);
  }
  if (names.count(peer)) out.push_back(peer);  // drawn last, over the others
  return out;
}

const Sample* find_sample(const BenchRun& run, const std::string& key, const std::string& backend) {
  for (const Sample& s : run.samples) {
    if (s.backend == backend && s.chart_key() == key) return &s;
  }
  return nullptr;
}

}  // namespace kc::bench
