// The parent's side of a run: forked workers (run/worker.h) polled on their result pipes,
// each given a case's tasks at a time. A worker that dies by a signal is CRASHED, one that
// outlives its timeout (the parent's clock, whatever the pipe does) is killed and TIMEOUT,
// and the tasks it did not start go to a fresh worker. Each worker leads a process group,
// killed whole at its end.
#include "run/isolate.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <vector>

#include "core/task_threads.h"
#include "run/process_group.h"
#include "run/process_state.h"
#include "run/worker.h"

namespace kc {
namespace {

// The parent's pipe ends of the active workers, which a new worker closes.
std::vector<int> open_fds(const std::vector<Worker>& active) {
  std::vector<int> fds;
  for (const Worker& w : active) {
    fds.push_back(w.fd);
    fds.push_back(w.cmd);
  }
  return fds;
}

// Workers started as slots free up and given the next case as they become idle, their
// results taken as they arrive, the tasks a dead worker did not start queued for a fresh one.
class Scheduler {
 public:
  Scheduler(std::vector<IsolatedGroup>& groups, const IsolateOptions& opt) : groups_(groups), opt_(opt) {
    size_t total = 0;
    for (const IsolatedGroup& g : groups_) {
      offset_.push_back(total);
      total += g.tasks.size();
    }
    results_.resize(total);
    for (size_t i = 0; i < groups_.size(); ++i) {
      std::vector<size_t> all(groups_[i].tasks.size());
      for (size_t k = 0; k < all.size(); ++k) all[k] = k;
      if (!all.empty()) pending_.push_back({i, std::move(all)});
    }
  }

  std::vector<CaseResult> run() {
    while (!pending_.empty() || !active_.empty()) {
      fill_slots();
      poll_workers();
    }
    return std::move(results_);
  }

  std::vector<CaseResult> run_in_process() {
    for (auto& [g, subs] : pending_) {
      for (size_t k : subs) {
        if (held_back(g, k)) continue;
        const ProcessState restored;
        deliver(g, k, work_caught(groups_[g].tasks[k]));
      }
      for (IsolatedTask& t : groups_[g].tasks) t.work = nullptr;  // what the group shared is let go
    }
    return std::move(results_);
  }

 private:
  void deliver(size_t g, size_t k, CaseResult r) {
    CaseResult& slot = results_[offset_[g] + k];
    slot = std::move(r);
    if (opt_.observe) opt_.observe(slot);
    if (opt_.progress) opt_.progress(++done_, results_.size(), slot);
  }

  // Whether the gate holds task k of group g back; its result is then SKIPPED with the reason.
  bool held_back(size_t g, size_t k) {
    const CaseResult& label = groups_[g].tasks[k].label;
    const std::string why = opt_.gate ? opt_.gate(label) : std::string();
    if (why.empty()) return false;
    CaseResult r = label;
    r.disposition = Disposition::kSkipped;
    r.message = why;
    deliver(g, k, std::move(r));
    return true;
  }

  // Each idle worker gets the next case; then new workers while slots are free. An idle
  // worker with nothing left to do is ended.
  void fill_slots() {
    for (size_t i = 0; i < active_.size();) {
      if (!active_[i].idle()) {
        ++i;
      } else if (!next_case(active_[i])) {
        end(active_[i]);
        active_.erase(active_.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
    while (!pending_.empty() && static_cast<int>(active_.size()) < std::max(1, opt_.jobs)) {
      Worker w;
      if (!start_worker(groups_, std::max(1, opt_.cases_per_worker), open_fds(active_), w)) {
        auto [g, subs] = std::move(pending_.front());
        pending_.pop_front();
        std::erase_if(subs, [&](size_t k) { return held_back(g, k); });
        for (size_t k : subs) {
          deliver(g, k, died(groups_[g].tasks[k], Disposition::kCrashed, "could not start a worker process"));
        }
        continue;
      }
      active_.push_back(std::move(w));
      if (!next_case(active_.back())) {
        end(active_.back());
        active_.pop_back();
      }
    }
  }

  // Sends the worker the next case whose tasks the gate lets start; false when none is left
  // or the worker could not take it (the worker is then ended).
  bool next_case(Worker& w) {
    while (!pending_.empty()) {
      auto [g, subs] = std::move(pending_.front());
      pending_.pop_front();
      std::erase_if(subs, [&](size_t k) { return held_back(g, k); });
      if (subs.empty()) continue;
      // A fresh worker that cannot take its first case: its end is that case's CRASHED.
      if (assign(w, g, subs) || w.served == 1) return true;
      w.subs.clear();  // one that went away between cases: the case waits for another
      w.at = 0;
      pending_.push_front({g, std::move(subs)});
      return false;
    }
    return false;
  }

  void poll_workers() {
    std::vector<pollfd> fds;
    for (const Worker& w : active_) fds.push_back({w.eof ? -1 : w.fd, POLLIN, 0});  // -1: not polled
    poll(fds.data(), fds.size(), 50);
    for (size_t i = 0; i < active_.size();) {
      Worker& w = active_[i];
      if (!w.eof && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) w.eof = drain(w);
      take(w);
      if (!over(w, opt_.timeout_seconds)) {
        ++i;
        continue;
      }
      end(w);
      active_.erase(active_.begin() + static_cast<long>(i));
      fds.erase(fds.begin() + static_cast<long>(i));
    }
  }

  // The results that arrived, each the verdict of its task whatever the worker does next.
  void take(Worker& w) {
    std::vector<CaseResult> got;
    w.garbled = !take_results(w, got);
    for (CaseResult& r : got) {
      deliver(w.group, w.subs[w.at], std::move(r));
      ++w.at;
      w.start = WorkerClock::now();
    }
  }

  void end(Worker& w) {
    std::vector<size_t> rest;
    CaseResult last = finish(groups_[w.group], w, opt_.timeout_seconds, rest);
    std::vector<pid_t> keep;
    for (const Worker& other : active_) {
      if (other.pid != w.pid) keep.push_back(other.pid);
    }
    const int strays = kill_stray_children(keep);
    name_leftovers(last, 0, strays);
    if (w.at < w.subs.size()) {
      deliver(w.group, w.subs[w.at], std::move(last));
    } else if (!last.message.empty() &&
               !w.subs.empty()) {  // what outlived the worker's own cleanup: named on its last result
      CaseResult& r = results_[offset_[w.group] + w.subs.back()];
      r.message += (r.message.empty() ? "" : "; ") + last.message;
    }
    if (!rest.empty()) pending_.push_front({w.group, std::move(rest)});
  }

  std::vector<IsolatedGroup>& groups_;
  const IsolateOptions& opt_;
  std::vector<size_t> offset_;  // of each group's first result
  std::vector<CaseResult> results_;
  std::deque<std::pair<size_t, std::vector<size_t>>> pending_;  // (group, its tasks to start)
  std::vector<Worker> active_;
  size_t done_ = 0;
};

}  // namespace

std::vector<CaseResult> run_groups(std::vector<IsolatedGroup> groups, const IsolateOptions& opt) {
  Scheduler s(groups, opt);
  if (opt.in_process) return s.run_in_process();
  become_subreaper();  // descendants that leave their worker's group come back to be killed
  // A worker gone between cases must be an error on its command pipe, not this process's end.
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &before);
  // Read by the forked workers (the parent runs no task itself).
  const int workers = std::min<int>(std::max(1, opt.jobs), static_cast<int>(std::max<size_t>(1, groups.size())));
  set_task_threads(std::max(1, task_cores() / workers));
  std::vector<CaseResult> results = s.run();
  set_task_threads(0);
  sigaction(SIGPIPE, &before, nullptr);
  // What strays left behind comes back here as they die: until none is left.
  for (int round = 0; round < 16 && kill_stray_children({}) > 0; ++round) {
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {  // orphans that died after their group was killed
  }
  return results;
}

std::vector<CaseResult> run_tasks(std::vector<IsolatedTask> tasks, const IsolateOptions& opt) {
  std::vector<IsolatedGroup> groups;
  groups.reserve(tasks.size());
  for (IsolatedTask& t : tasks) groups.push_back({{std::move(t)}});
  return run_groups(std::move(groups), opt);
}

}  // namespace kc
