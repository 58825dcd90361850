// The engine of `kcheck fuzz` (docs/cli.md, "fuzz and gen"): replay the saved regressions, then
// generate cases from (seed, index), steer each one's data seed and check it on the
// backend in a worker process, and shrink the first failure of each kind, saving it
// before and after as YAML (with the seed it was checked on).
// Case k of a run belongs to shard k mod n: a run split over n processes checks the
// same cases as one run, whatever the machines. Part of kcheck (it prints progress).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gen/gen.h"
#include "kc/registry.h"
#include "kc/result.h"

namespace kc::fuzz {

// The project's regression cases, replayed before every fuzz run (relative to the
// working directory), whatever folder new failures are saved in.
inline constexpr const char* kRegressions = "cases/regressions";

struct Settings {
  gen::OpSet ops = gen::kAllOps;
  uint64_t seed = 0;
  double time_budget = 0;  // seconds of generation; <= 0: no time limit
  int64_t count = -1;      // cases over all shards; < 0: no count limit
  std::string backend = "reference";
  std::vector<std::string> plugins;  // for the reproduce command
  std::vector<std::string> python;   // Python modules (--python), for the reproduce command
  // Tasks a worker serves before a fresh one replaces it (run/isolate.h): more than 1
  // where a Python module's import would otherwise be paid per task.
  int cases_per_worker = 1;
  std::string save_dir = "cases/regressions";  // replayed first, with kRegressions
  int64_t shard = 0, shards = 1;
  int jobs = 1;
  double shrink_time = 20;   // seconds per shrink
  double timeout = 60;       // per case, in the worker
  int64_t max_failures = 0;  // stop after this many failing cases; 0: no limit
  bool in_process = false;   // no worker processes (debugging; a crash ends the run)
  bool progress = false;     // a progress line on stderr
  // How a generated case's data seed is steered, in the worker that checks it (the
  // generator leaves it as drawn): gen::steer_seed; tests plant a crash here. It may
  // change the data seed only: the worker reports the seed alone back to the parent.
  std::function<Case(Case, const std::function<void(uint64_t)>&)> steer = [](Case c, const auto& trying) {
    return gen::steer_seed(std::move(c), trying);
  };
};

// A failure that was shrunk and saved.
struct Saved {
  std::string check;     // the check that failed (or crashed / timeout / invalid)
  std::string original;  // path of the case as generated
  std::string shrunk;    // path of the shrunk case
  int steps = 0, tried = 0;
  bool out_of_time = false;
  double seconds = 0;
  // Whether each was written (the --save folder is checked before the run, but it may
  // change during it): a path not written is never shown as saved.
  bool original_written = false, shrunk_written = false;
};

struct Outcome {
  std::vector<CaseResult> results;  // replayed cases first, then generated ones
  int64_t replayed = 0, generated = 0;
  double seconds = 0;        // the whole run
  double check_seconds = 0;  // generating and checking, without replay and shrinking
  std::vector<Saved> saved;
  std::map<std::string, int> failed_checks;  // failing cases per check name
  bool failed = false;                       // anything failed, crashed, timed out or a generated case was invalid
  std::vector<CaseResult> invalid_files;     // replayed cases that are INVALID (bad input, not a failure)
  bool regressions_found = false;            // kRegressions was a folder when the replay began
  int64_t steered_away = 0;                  // draws passed over: the backend's supports() refused them
};

Outcome run(const Settings& s, const Registry& registry);

// `kcheck run PATH --backend B [--plugin P]...`
std::string reproduce_command(const Settings& s, const std::string& path);

}  // namespace kc::fuzz
