// The kcheck command line (docs/cli.md): one function per command.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kc/report.h"
#include "kc/result.h"

namespace kc {
struct RunInfo;
}

namespace kc::cli {

using Args = std::vector<std::string>;

int run_command(const Args& args);       // kcheck run PATH... [options]
int explain_command(const Args& args);   // kcheck explain CASE
int backends_command(const Args& args);  // kcheck backends
int checks_command(const Args& args);    // kcheck checks [--markdown]
int merge_command(const Args& args);     // kcheck merge R1.json R2.json ... -o R.json
int bench_command(const Args& args);     // kcheck bench PATH... [--backend a,b] [--out F.json]
int gen_command(const Args& args);       // kcheck gen --op OP --count N --seed S -o DIR
int fuzz_command(const Args& args);      // kcheck fuzz [--op OP] [--time S | --count N] ...

// A failure reproducer's file name: NNN-CASE.BACKEND.CHECK.yaml (reproducer_files.cpp),
// at most kMaxReproducerName bytes whatever the names hold (each part is cut; the
// number keeps names unique), within the 255 of common file systems.
inline constexpr size_t kMaxReproducerName = 200;
std::string reproducer_name(int n, const CaseResult& r);
// Gives each case that did not pass (an XFAIL needs none) its reproducer's path in
// `folder`, as the result's field reproducer_file, which the report then carries.
void name_reproducers(const std::string& folder, std::vector<CaseResult>& results);
// Writes the reproducers name_reproducers named, each starting with the command that
// reruns it (`# rerun: kcheck run PATH --backend NAME --plugin LIB... --python MOD...`,
// every argument shell-quoted). False when one could not be written (each is named on stderr).
// The run's --python modules, for the rerun line (set once, before the reports are written).
void set_rerun_python_modules(std::vector<std::string> modules);
bool write_failures(const std::string& folder, const std::vector<CaseResult>& results,
                    const std::vector<std::string>& plugins);
// The backend of an invalid case file's one result: it is invalid whatever the backend.
inline constexpr const char* kNoBackend = "-";

// Where kcheck run writes a report (report_targets.cpp): the whole run (backend empty),
// or with "{backend}" in the --report path one report per backend, holding its results
// and the run's invalid case files, with its own failures/ folder beside it.
struct ReportTarget {
  std::string backend;  // empty: every result
  std::string path;
};
bool per_backend_report(const std::string& report);
// Where a report's failure reproducers are written: failures/ next to it.
std::string failures_folder(const std::string& report);
std::vector<ReportTarget> report_targets(const std::string& report, const std::vector<std::string>& backends);
// Why a target's report or its failures folder could not be written, or empty.
std::string report_target_problem(const ReportTarget& t);
// Writes each target's report and reproducers (naming them in `results`); an error
// message when a report could not be written; `reproducers` false when one was not.
std::string write_report_targets(const std::vector<ReportTarget>& targets, std::vector<CaseResult>& results,
                                 const RunInfo& info, const std::vector<std::string>& plugins, bool& reproducers);

// One argument as a POSIX shell word that stays on one line: 'text' ('\'' for a quote),
// or $'text' with control characters as \xHH; bash reads back the exact bytes.
std::string shell_quote(std::string_view text);

// Helpers shared by the commands: a whole decimal uint64, or nullopt; a whole positive
// decimal number of seconds below kMaxSeconds (not NaN, not inf), or nullopt.
inline constexpr double kMaxSeconds = 1e9;
std::optional<uint64_t> parse_uint(const std::string& text);
std::optional<double> parse_seconds(const std::string& text);
// The same, with the option's error naming the limit ("--timeout: expected a positive
// number of seconds less than 1e9, got '...'"), or empty.
std::string parse_seconds_option(const std::string& flag, const std::string& text, double& seconds);
// --jobs N for run and fuzz alike: 1 to kMaxJobs, or the error naming the range.
inline constexpr int kMaxJobs = 1024;
std::string parse_jobs(const std::string& text, int& jobs);
// --shard's value: i/n (0 <= i < n), or auto (from a Slurm job array or a Kubernetes
// Indexed Job; shard.cpp). An error message or empty.
std::string parse_shard_option(const std::string& v, int64_t& shard, int64_t& shards);
// The case files of shard i of n: file k belongs to shard k mod n.
std::vector<std::string> shard_of(const std::vector<std::string>& files, int64_t shard, int64_t shards);
// What identifies the set of case files a run was given ("463 files, 5f2c..."): shards of
// one run share it, and merge refuses reports that do not.
std::string case_set_digest(const std::vector<std::string>& files);
// A whole number from 0 (often: no limit) to 1e9 for `flag`.
std::string parse_count_option(const std::string& flag, const std::string& text, int& count);
// Why a single-valued option is refused the second time it is given (the last would
// otherwise win without a word), or empty; `seen` holds the options given so far.
std::string given_twice(std::set<std::string>& seen, const std::string& flag, const std::string& hint = "");
// Writes text to path, creating the folders on its way; empty, or the reason it could
// not (the system's: "Is a directory", "No space left on device").
std::string write_text_file(const std::string& path, const std::string& text);

// Output paths (output_paths.cpp), checked before a run.
// Why the file an option names (flag: "--report", ...) could not be written after the
// work is done (it is a folder, a folder on its way is a file, no permission), or empty:
// asked before a run, so that a long run is not lost to a typo.
std::string output_file_problem(const std::string& flag, const std::string& path);
// Why files cannot be written in the folder an option names, `role` saying what it is
// for ("the folder failures are saved in"), or empty: it (or a folder on its way) is a
// file, or there is no permission to create or write in it.
std::string output_folder_problem(const std::string& flag, const std::string& role, const std::string& dir);
// Whether a and b are one file: the same inode when both exist (hard and symbolic links
// included), the same path with links resolved when neither does.
bool same_file(const std::string& a, const std::string& b);
// Whether `path` lies in `folder` or a folder below it, links resolved.
bool inside_folder(const std::string& path, const std::string& folder);
// Whether writing `path` would put a file that a scan of `folder` reads (a case file, or
// a NAME.expect beside one) there, links resolved.
bool read_as_input(const std::string& path, const std::string& folder);
// A file a command writes and the option that names it.
struct Output {
  std::string flag, path;
};
// Why an output is one of the input case files or the same file as another output, or
// empty: writing it would replace the case, or one output the other, without a word.
std::string outputs_clash(const std::vector<Output>& outputs, const std::vector<std::string>& inputs);
// Text for the terminal: control characters other than newline and tab (C0, DEL and
// C1: an escape sequence in a case name or a path, say) and bytes that are not UTF-8
// written as \xNN, so that input cannot repaint or clear the screen; other UTF-8 is kept.
std::string terminal_safe(std::string_view text);
// The current time as ISO 8601 UTC, e.g. 2026-11-21T12:05:28Z.
std::string now_utc();

// Where a report's results came from, into its info: kc_version, kc_commit, and the GPU
// (device) when one of the backends run is a built-in GPU backend.
void add_build_info(RunInfo& info, const std::vector<std::string>& backends);

// kcheck run's per-task limit when --timeout is not given: a hung kernel is TIMEOUT,
// not the end of the run.
inline constexpr double kDefaultTimeoutSeconds = 60;
// Cases one worker of `kcheck run` serves before a fresh one replaces it: enough that a
// Python backend imports its libraries a few times per run, few enough to bound a leak.
inline constexpr int kDefaultCasesPerWorker = 256;

// Why --timeout and --in-process cannot be given together: a case run in kcheck's own
// process cannot be stopped, so the timeout would be ignored.
std::string in_process_timeout_problem();

// Whether a command was asked for its usage: --help or -h among its arguments.
bool wants_help(const Args& args);

// Prints "kcheck: <message>" and the usage hint to stderr; returns 2.
int usage_error(const std::string& message);

// Guards kcheck's process for the command's duration (process_guard.cpp): an exit() from
// plugin code before finished() is exit 2 with a message; SIGPIPE ignored; the judge's
// floating-point environment pinned.
void guard_process();
// Marks the command finished, so that its exit with `code` is its own.
int finished(int code);

}  // namespace kc::cli
