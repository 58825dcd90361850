// The fuzz loop (see fuzz_session.h). Cases run in batches of a few per worker slot
// through run_tasks (one forked worker per case: measured at well under a millisecond
// a case, small beside the checks themselves), and the budget is looked at between
// batches. A failure is named after its first failing check; the first failure of each
// name is shrunk (RapidCheck's shrink tree of the generated case, every candidate run
// in a worker too) and saved, later ones are counted: a broken kernel fails almost
// every case, and one small reproducer per kind of failure is what a user can act on.
// More on the method: docs/notes.md, section harness/src/gen/fuzz_session.cpp.
#include "fuzz_session.h"
#include "gen/boundary_sweep.h"
#include "gen/steering.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <set>
#include <string_view>

#include "kc/case_io.h"
#include "kc/runner.h"
#include "run/isolate.h"

namespace kc::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool is_failure(Disposition d) {
  return d == Disposition::kFailed || d == Disposition::kCrashed || d == Disposition::kTimeout ||
         d == Disposition::kInvalid;
}

bool check_failed(const CheckResult& c) {
  return c.disposition == Disposition::kFailed || c.disposition == Disposition::kCrashed;
}

// How the message of a case whose worker died while steering its data seed begins
// (Session::settle).
constexpr std::string_view kWhileSteering = "while the oracle judged the case's data seed ";

// The check a failing result is named after: the first that failed, else the case's
// disposition ("crashed", "timeout", "invalid"), as "steering_crashed" (_timeout) when
// the worker died while the oracle steered the data seed: an oracle crash is its own
// kind, so that it does not hide the first backend crash of the run from shrinking.
std::string failure_kind(const CaseResult& r) {
  for (const CheckResult& c : r.checks) {
    if (check_failed(c)) return c.name;
  }
  const bool steering = std::string_view(r.message).substr(0, kWhileSteering.size()) == kWhileSteering;
  return (steering ? "steering_" : "") + std::string(disposition_key(r.disposition));
}

// A shrink candidate keeps the failure when the same check still fails (other checks
// may come and go), or for a case-level failure, when it ends the same way.
bool fails_like(const CaseResult& r, const std::string& kind) {
  if (const CheckResult* c = find_check(r, kind)) return check_failed(*c);
  return is_failure(r.disposition) && failure_kind(r) == kind;
}

std::string first_line(const std::string& s, size_t max = 300) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > max ? line.substr(0, max) + "..." : line;
}

std::string diagnosis(const CaseResult& r, const std::string& kind) {
  const CheckResult* c = find_check(r, kind);
  return first_line(c ? c->message : r.message);
}

// Where a worker steering a case's data seed leaves it, for the parent to read once the
// worker has exited or died: a page shared across fork, one slot a case. kSteering with
// the seed the oracle is running on, then kSteered with the seed the case is checked on.
class SteerSlots {
 public:
  enum State : uint32_t { kUnset, kSteering, kSteered };
  struct Slot {
    std::atomic<uint64_t> seed{0};
    std::atomic<uint32_t> state{kUnset};
  };

  explicit SteerSlots(size_t n) : n_(n) {
    void* p = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    slots_ = static_cast<Slot*>(p);
    for (size_t i = 0; i < n_; ++i) new (&slots_[i]) Slot();
  }
  ~SteerSlots() { munmap(slots_, bytes()); }
  SteerSlots(const SteerSlots&) = delete;
  SteerSlots& operator=(const SteerSlots&) = delete;

  Slot& operator[](size_t i) { return slots_[i]; }
  void reset(size_t i) { slots_[i].state = kUnset; }

 private:
  size_t bytes() const { return n_ * sizeof(Slot); }
  size_t n_;
  Slot* slots_ = nullptr;
};

gen::Options unsteered() {
  gen::Options o;
  o.steer = false;  // the worker steers (Session::steer_here)
  return o;
}

class Session {
  static constexpr size_t kChunk = 8;  // cases per worker process

 public:
  Session(const Settings& s, const Registry& reg)
      : s_(s), reg_(reg), gen_(gen::fuzz_case(s.ops, unsteered())), slots_(batch_size() + 1) {}

  Outcome run() {
    start_ = Clock::now();
    replay();
    uint64_t next = static_cast<uint64_t>(s_.shard);
    while (!spent(next)) run_batch(next);
    if (s_.progress) std::fputc('\n', stderr);
    out_.seconds = since(start_);
    return std::move(out_);
  }

 private:
  // `per_task` cases in each task: the timeout and the progress count scale with it.
  IsolateOptions isolation(bool with_progress, size_t per_task = 1) {
    IsolateOptions o{s_.jobs, s_.timeout * static_cast<double>(per_task), s_.in_process, nullptr, nullptr, nullptr};
    o.cases_per_worker = s_.cases_per_worker;
    if (with_progress && s_.progress) {
      o.progress = [this, per_task](size_t, size_t, const CaseResult&) {
        show_progress(static_cast<int64_t>(per_task));
      };
    }
    return o;
  }

  bool spent(uint64_t next) const {
    if (s_.count >= 0 && next >= static_cast<uint64_t>(s_.count)) return true;
    if (s_.time_budget > 0 && since(start_) >= s_.time_budget) return true;
    return s_.max_failures > 0 && failures_ >= s_.max_failures;
  }

  void replay() {
    std::vector<std::string> files;
    std::vector<std::filesystem::path> seen;
    std::error_code found_ec;
    out_.regressions_found = std::filesystem::is_directory(kRegressions, found_ec);
    for (const std::string& dir : {std::string(kRegressions), s_.save_dir}) {
      std::error_code ec;
      if (!std::filesystem::is_directory(dir, ec)) continue;
      const std::filesystem::path canonical = std::filesystem::canonical(dir, ec);
      if (ec || std::find(seen.begin(), seen.end(), canonical) != seen.end()) continue;
      seen.push_back(canonical);
      CaseFiles found = find_case_files(dir);
      for (std::string& f : found.files) files.push_back(std::move(f));
      // A folder that cannot be listed: its own entry (shard 0 reports it).
      for (LoadedCase& problem : found.problems) {
        if (s_.shard == 0) loaded_.push_back(std::move(problem));
      }
    }
    for (size_t i = 0; i < files.size(); ++i) {
      if (static_cast<int64_t>(i) % s_.shards != s_.shard) continue;
      for (LoadedCase& lc : load_case_file(files[i])) loaded_.push_back(std::move(lc));
    }
    std::vector<IsolatedTask> tasks;
    for (const LoadedCase& lc : loaded_) {
      CaseResult label;
      label.source = source_of(lc);
      label.case_name = lc.c.ok() ? case_label(*lc.c) : label.source;
      label.backend = s_.backend;
      tasks.push_back({label, [this, &lc] { return check_loaded_on(lc, reg_, s_.backend); }});
    }
    for (CaseResult& r : run_tasks(std::move(tasks), isolation(true))) record(std::move(r), false);
    out_.replayed = static_cast<int64_t>(loaded_.size());
  }

  size_t batch_size() const { return static_cast<size_t>(std::max(1, s_.jobs)) * 2 * kChunk; }
  static constexpr size_t kWiden = 8;  // draws per case of a batch the probe chooses from

  // Which draws the backend supports ('1'/'0' each), or empty when that is not known.
  std::string probe(const std::vector<std::pair<uint64_t, rc::Shrinkable<Case>>>& drawn) {
    if (drawn.empty() || s_.in_process) return {};
    std::vector<Case> cases;
    for (const auto& d : drawn) cases.push_back(d.second.value());
    std::vector<IsolatedTask> one;
    one.push_back(supports_probe(reg_, s_.backend, std::move(cases)));
    return probe_answer(run_tasks(std::move(one), isolation(false, drawn.size())).front(), drawn.size());
  }
  size_t shrink_slot() const { return batch_size(); }  // the slot after the batch's

  // In the worker: the case with its data seed steered, the seed left in the slot.
  Case steer_here(Case c, SteerSlots::Slot& slot) const {
    slot.seed = c.data.seed;
    slot.state = SteerSlots::kSteering;
    c = s_.steer(std::move(c), [&slot](uint64_t seed) { slot.seed = seed; });
    slot.seed = c.data.seed;
    slot.state = SteerSlots::kSteered;
    return c;
  }

  // In the parent, after the worker: the case and its result as checked, with the
  // steered seed. A worker that died (or ran out of time) while steering: the result
  // says so, and the case carries the seed the oracle was running on.
  void settle(Case& c, CaseResult& r, size_t slot) {
    const uint32_t state = slots_[slot].state;
    if (state == SteerSlots::kUnset) return;  // the worker died before this case
    c.data.seed = slots_[slot].seed;
    r.reproducer = case_to_one_line(c);
    if (state == SteerSlots::kSteering) {
      r.message = std::string(kWhileSteering) + std::to_string(c.data.seed) +
                  " for steering (the reproducer has that seed): " + r.message;
    }
  }

  Case named(Case c, uint64_t index, const std::string& suffix = "") const {
    c.name = "fuzz seed " + std::to_string(s_.seed) + " case " + std::to_string(index) + suffix;
    c.source = "kcheck fuzz --seed " + std::to_string(s_.seed) + ": case " + std::to_string(index);
    return c;
  }

  IsolatedTask task_for(const Case& c, size_t slot) {
    CaseResult label;
    label.case_name = case_label(c);
    label.source = c.source;
    label.backend = s_.backend;
    label.reproducer = case_to_one_line(c);
    return {label, [this, c, slot] {
              return check_case(steer_here(c, slots_[slot]), *reg_.make(s_.backend), reg_.factory(s_.backend));
            }};
  }

  // One worker checks a chunk of cases (a fresh backend each; case i's slot is
  // first + i), their results framed in the message of the chunk's result.
  IsolatedTask chunk_task(std::vector<Case> chunk, size_t first) {
    CaseResult label;
    label.case_name = "a chunk of " + std::to_string(chunk.size()) + " cases";
    label.backend = s_.backend;
    return {label, [this, chunk, first] {
              CaseResult packed;
              for (size_t i = 0; i < chunk.size(); ++i) {
                const Case c = steer_here(chunk[i], slots_[first + i]);
                const std::string one = serialize(check_case(c, *reg_.make(s_.backend), reg_.factory(s_.backend)));
                packed.message += std::to_string(one.size()) + ":" + one;
              }
              return packed;
            }};
  }

  static bool unpack(const CaseResult& packed, size_t count, std::vector<CaseResult>& out) {
    const std::string& m = packed.message;
    size_t pos = 0;
    for (size_t i = 0; i < count; ++i) {
      const size_t colon = m.find(':', pos);
      if (colon == std::string::npos) return false;
      const size_t n = std::strtoull(m.c_str() + pos, nullptr, 10);
      CaseResult r;
      if (colon + 1 + n > m.size() || !deserialize(m.substr(colon + 1, n), r)) return false;
      out.push_back(std::move(r));
      pos = colon + 1 + n;
    }
    return true;
  }

  // Results of `cases` in order, each case steered as it was checked. Chunks amortise
  // the fork (about a millisecond a worker, as much as a small case takes to check); a
  // chunk whose worker died is run again case by case, so that the crash or hang lands
  // on the case that caused it.
  std::vector<CaseResult> check_cases(std::vector<Case>& cases) {
    std::vector<IsolatedTask> tasks;
    for (size_t i = 0; i < cases.size(); ++i) slots_.reset(i);
    for (size_t i = 0; i < cases.size(); i += kChunk) {
      tasks.push_back(chunk_task(
          {cases.begin() + static_cast<long>(i), cases.begin() + static_cast<long>(std::min(cases.size(), i + kChunk))},
          i));
    }
    IsolateOptions iso = isolation(true, kChunk);
    const std::vector<CaseResult> packed = run_tasks(std::move(tasks), iso);
    std::vector<CaseResult> out;
    for (size_t t = 0; t < packed.size(); ++t) {
      const size_t first = t * kChunk, count = std::min(kChunk, cases.size() - first);
      const size_t before = out.size();
      if (packed[t].disposition == Disposition::kPassed && unpack(packed[t], count, out)) {
        for (size_t i = first; i < first + count; ++i) settle(cases[i], out[i], i);
        continue;
      }
      out.resize(before);
      for (size_t i = first; i < first + count; ++i) out.push_back(check_one(cases[i], i));
    }
    return out;
  }

  void run_batch(uint64_t& next) {
    const auto batch_start = Clock::now();
    std::vector<std::pair<uint64_t, rc::Shrinkable<Case>>> trees;
    std::vector<Case> cases;
    const size_t size = batch_size();
    // A wider draw, of which the backend's supports() picks the batch (steering.h).
    std::vector<std::pair<uint64_t, rc::Shrinkable<Case>>> drawn;
    for (; drawn.size() < kWiden * size && !(s_.count >= 0 && next >= static_cast<uint64_t>(s_.count));
         next += s_.shards) {
      drawn.emplace_back(next, gen::generate(gen_, s_.seed, next));
    }
    const std::string runs = probe(drawn);
    for (size_t i = 0; i < drawn.size(); ++i) {
      if (trees.size() == size) {
        next = drawn[i].first;  // the rest is drawn again next batch
        break;
      }
      if (!runs.empty() && runs[i] == '0') {
        ++out_.steered_away;
        continue;
      }
      trees.push_back(std::move(drawn[i]));
      cases.push_back(named(trees.back().second.value(), trees.back().first));
    }
    std::vector<CaseResult> results = check_cases(cases);
    out_.check_seconds += since(batch_start);
    for (size_t i = 0; i < results.size(); ++i) {
      out_.generated += 1;
      const bool bad = is_failure(results[i].disposition);
      const std::string kind = bad ? failure_kind(results[i]) : "";
      if (bad && kinds_seen_.insert(kind).second)
        shrink_and_save(trees[i].first, trees[i].second, cases[i], results[i]);
      record(std::move(results[i]), true);
    }
    done_ = static_cast<int64_t>(out_.results.size());  // the chunk counts were estimates
  }

  void record(CaseResult r, bool generated) {
    if (!generated && r.disposition == Disposition::kInvalid) {  // a bad case file, as in kcheck run
      out_.invalid_files.push_back(r);
    } else if (is_failure(r.disposition)) {
      out_.failed = true;
      failures_ += generated ? 1 : 0;
      bool named_check = false;
      for (const CheckResult& c : r.checks) {
        if (check_failed(c)) out_.failed_checks[c.name] += 1, named_check = true;
      }
      if (!named_check) out_.failed_checks[failure_kind(r)] += 1;
    }
    out_.results.push_back(std::move(r));
  }

  // The case checked alone in a worker, steered there (c becomes the case as checked).
  CaseResult check_one(Case& c, size_t slot) {
    slots_.reset(slot);
    std::vector<IsolatedTask> one;
    one.push_back(task_for(c, slot));
    CaseResult r = run_tasks(std::move(one), isolation(false)).front();
    settle(c, r, slot);
    return r;
  }

  // `checked`: the tree's case as it was checked (steered), `first` its result.
  void shrink_and_save(uint64_t index, const rc::Shrinkable<Case>& tree, const Case& checked, const CaseResult& first) {
    const std::string kind = failure_kind(first);
    clear_progress();
    std::printf("%s after %.1f s: case %llu fails %s: %s\n", std::string(disposition_name(first.disposition)).c_str(),
                since(start_), static_cast<unsigned long long>(index), kind.c_str(), diagnosis(first, kind).c_str());
    std::fflush(stdout);
    const auto t0 = Clock::now();
    CaseResult last = first;
    Case last_case = named(checked, index, " (shrunk)");  // the smallest failing case, steered
    auto still_fails = [&](const Case& candidate) {
      Case c = named(candidate, index, " (shrunk)");
      CaseResult r = check_one(c, shrink_slot());
      if (!fails_like(r, kind)) return false;
      last = std::move(r);
      last_case = std::move(c);  // shrink_case takes this candidate as its smallest
      return true;
    };
    const auto deadline =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s_.shrink_time));
    const gen::ShrinkOutcome so = gen::shrink_case(tree, still_fails, deadline);
    const std::string stem = "fuzz-s" + std::to_string(s_.seed) + "-c" + std::to_string(index) + "-" + kind;
    Saved sv{kind, saved_path(stem), saved_path(stem + "-shrunk"), so.steps, so.tried, so.out_of_time, 0};
    sv.original_written = save(checked, first, kind, sv.original);
    sv.shrunk_written = save(last_case, last, kind, sv.shrunk);
    sv.seconds = since(t0);
    std::printf("  shrunk in %d steps (%d candidates, %.1f s%s): %s\n", sv.steps, sv.tried, sv.seconds,
                sv.out_of_time ? ", stopped by --shrink-time" : "", diagnosis(last, kind).c_str());
    print_saved(sv);
    std::fflush(stdout);
    out_.saved.push_back(std::move(sv));
  }

  std::string saved_path(const std::string& stem) const {
    return (std::filesystem::path(s_.save_dir) / (stem + ".yaml")).string();
  }

  // Each file as saved or NOT saved, and the command that reproduces the failure from
  // a file that was written (the shrunk one when it was).
  void print_saved(const Saved& sv) const {
    for (const auto& [path, written] : {std::pair{sv.original, sv.original_written}, {sv.shrunk, sv.shrunk_written}}) {
      std::printf(written ? "  saved %s\n" : "  NOT saved (cannot write it): %s\n", path.c_str());
    }
    const std::string& file = sv.shrunk_written ? sv.shrunk : sv.original;
    if (sv.shrunk_written || sv.original_written) std::printf("  reproduce: %s\n", reproduce_command(s_, file).c_str());
  }

  // False when the file could not be written whole (named on stderr).
  bool save(const Case& c, const CaseResult& r, const std::string& kind, const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    std::string text = "# kcheck fuzz --seed " + std::to_string(s_.seed) + " --op " +
                       std::string(gen::op_set_name(s_.ops)) + ": " + kind + " " +
                       std::string(disposition_name(r.disposition)) + " on backend " + s_.backend + "\n";
    text += "# " + diagnosis(r, kind) + "\n# reproduce: " + reproduce_command(s_, path) + "\n";
    errno = 0;
    std::ofstream f(path, std::ios::binary);
    f << text << case_to_yaml(c);
    f.close();
    if (!f) {
      std::fprintf(stderr, "kcheck fuzz: cannot write %s: %s\n", path.c_str(),
                   errno ? std::strerror(errno) : "an I/O error");
    }
    return static_cast<bool>(f);
  }

  void show_progress(int64_t just_done) {
    done_ += just_done;
    const double t = since(start_);
    if (t - shown_at_ < 0.1) return;  // a terminal needs no more than ten lines a second
    shown_at_ = t;
    std::fprintf(stderr, "\r\033[K[fuzz] %lld cases  %.1f/s  %lld failed", static_cast<long long>(done_),
                 t > 0 ? static_cast<double>(done_) / t : 0.0, static_cast<long long>(failures_));
    if (s_.time_budget > 0) std::fprintf(stderr, "  %.0f s left", std::max(0.0, s_.time_budget - t));
  }

  void clear_progress() {
    if (s_.progress) std::fputs("\r\033[K", stderr);
  }

  const Settings& s_;
  const Registry& reg_;
  rc::Gen<Case> gen_;
  SteerSlots slots_;
  Outcome out_;
  std::vector<LoadedCase> loaded_;
  std::set<std::string> kinds_seen_;
  Clock::time_point start_;
  int64_t failures_ = 0, done_ = 0;
  double shown_at_ = -1;
};

}  // namespace

std::string reproduce_command(const Settings& s, const std::string& path) {
  std::string cmd = "kcheck run " + path + " --backend " + s.backend;
  for (const std::string& p : s.plugins) cmd += " --plugin " + p;
  for (const std::string& p : s.python) cmd += " --python " + p;
  return cmd;
}

Outcome run(const Settings& s, const Registry& registry) { return Session(s, registry).run(); }

}  // namespace kc::fuzz
