// YAML case files (docs/cases.md): reading them into Cases, writing a Case back as a
// complete one-case file, and the one-line reproducer.
//
// Reading never throws: every problem (missing or unreadable file, malformed YAML,
// binary garbage, unknown keys, wrong types, a case validate() refuses) becomes a
// Status whose message names the file, the 1-based line and the field path, e.g.
//   cases/x.yaml:7: conv.groups: expected an integer, got "two"
// A file holds one case (a map of case fields), or `cases:` (a list of such maps) with
// an optional `defaults:` map deep-merged under every case (the case's own keys win;
// when both sides hold a map for a key the maps are merged, key by key).
// More on the method: docs/notes.md, section harness/include/kc/case_io.h.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kc/case.h"
#include "kc/status.h"

namespace kc {

// yaml-cpp holds about 500 bytes per scalar: a 4 MiB file of numbers takes about 1 GiB
// to parse, and no hand-written or generated case needs more than a few KiB.
inline constexpr int64_t kMaxCaseFileBytes = int64_t{4} << 20;
// Inline tensor values in one file, aliases counted each time they are used (a 7-byte
// `- *c` copies every tensor of case c): 64 MiB as doubles.
inline constexpr int64_t kMaxFileInlineValues = int64_t{1} << 23;

// One case read from a file, or one error. A file that cannot be read or parsed at all
// yields a single entry with the error (line 0 when no line applies).
//
// `c` is the result of parsing and validate(): the Case (with c.source = "file:line"),
// or the error. `expect` is filled whenever the case's `expect` key could be read, even
// when the rest of the case is refused, so that a runner can decide that a refused case
// whose error contains expect.error PASSES (docs/cases.md, "Refusals"). When `c` is ok,
// c->expect == expect.
struct LoadedCase {
  std::string file;
  int line = 0;  // 1-based line where the case starts
  StatusOr<Case> c = internal_error("case not loaded");
  Expectation expect;
  // An op: stack case that read but failed validate(), without inline tensors: what
  // `kcheck explain` shows of it (the layers up to the one that is refused).
  std::optional<Case> unvalidated;
};

// Where a loaded case comes from, as results name it: "file:line", or the file alone for
// a file that was never read (missing, unreadable: line 0).
std::string source_of(const LoadedCase& lc);
// The file of such a source: without a trailing ":<line>" (a path may hold ':' itself).
std::string_view source_file_of(std::string_view source);

// Reads and parses a case file. Never throws; a file that cannot be read (missing,
// a directory, not a regular file, too large, out of memory while parsing) yields one
// entry with not_found / invalid_argument / resource_exhausted.
std::vector<LoadedCase> load_case_file(const std::string& path);

// Parses YAML text as the contents of a case file named `file_name` (used verbatim in
// messages and LoadedCase::file; "<string>" when empty). Never throws.
std::vector<LoadedCase> parse_cases(std::string_view yaml_text, const std::string& file_name);

// A complete one-case file in block style that loads back to a Case equal to `c`
// (Case::operator== ignores `source`). Doubles are printed in the shortest form that
// reads back to the same value, NaN/inf as .nan/.inf/-.inf, padding as same,
// same_lower, valid or a list of [lo, hi] pairs, indices as integers, strings
// double-quoted with escapes. Empty optional parts (name, checks, stride, dilation,
// explicit padding with no pairs, tensors, expected, `expect: pass`) are left out.
// Round trip holds for every Case the reader can produce (a Case built by hand that
// breaks a reading rule, e.g. conv_bias_relu without a bias or rtol set on a bound
// tolerance, is written as it is and refused or normalised on reading).
std::string case_to_yaml(const Case& c);

// The same fields on one line as a YAML flow map, itself a valid case file:
//   {op: conv, dtype: f32, input: {batch: 1, channels: 2, spatial: [5]}, conv: {...}, ...}
std::string case_to_one_line(const Case& c);

// Why a folder scan passes over a file without reading it as a case. Every such file is
// counted by its reason, so that none is left out without a word: `key` names the count
// in kcheck run's report (passed_over_KEY), `text` says it in the summary after the count
// ("3 files passed over: 2 not *.yaml/*.yml, 1 under a folder with ...").
struct PassOverReason {
  std::string_view key, text;
};
inline constexpr PassOverReason kNotCaseName{"not_case_file", "not *.yaml/*.yml"};
inline constexpr PassOverReason kUnderScanSkip{"scan_skip",
                                               "under a folder with the scan-skip marker (KCHECK_SCAN_SKIP)"};
inline constexpr PassOverReason kLeadsNowhere{"broken_link", "leading nowhere (dangling or looping symbolic links)"};
// Counted by kcheck run, not by the scan: its own reproducers in a scanned folder.
inline constexpr PassOverReason kOwnReproducer{"reproducer",
                                               "in the report's failures folder (this command's own reproducers)"};
inline constexpr PassOverReason kPassOverReasons[] = {kNotCaseName, kUnderScanSkip, kLeadsNowhere, kOwnReproducer};
// A file passed over and the key of its reason.
struct PassedOverFile {
  std::string path;
  std::string_view reason;
};
// Files passed over, counted by the key of their reason.
using PassedOver = std::map<std::string, int64_t, std::less<>>;
int64_t passed_over_count(const PassedOver& counts, const PassOverReason& why);
// "3 files passed over: 2 not *.yaml/*.yml, 1 under ...", the reasons in the order of
// kPassOverReasons; empty when there are none.
std::string passed_over_text(const PassedOver& counts);

// The case files under `path`: the path itself when it is not a directory (whatever its
// extension; a path that does not exist is returned as is, so that loading it reports
// the error through the usual channel), or every *.yaml / *.yml entry below a
// directory, recursively, sorted by path. Entries named *.yaml that are not regular
// files (a dangling or looping symbolic link, a FIFO, a device) are listed too, so that
// loading them says why they are refused, as for the same path given directly. A folder
// that cannot be listed (permission denied, an I/O error) is an entry of `problems`
// naming it and the reason; entries that vanish during the walk (a /proc process that
// ended) are left out. Symbolic links to folders are followed, each folder read once
// however many routes reach it (by the route of a folder's own entries first, then by
// links in path order); a link to a folder above it, which would loop, is a problem
// naming both. A folder holding kScanSkipMarker is left out, its files counted. Every
// other file is counted in `passed_over` with its reason, except a NAME.expect beside a
// case file NAME.yaml or NAME.yml, which kcheck run reads with it.
struct CaseFiles {
  std::vector<std::string> files;
  std::vector<LoadedCase> problems;
  std::vector<PassedOverFile> passed_over;  // sorted by path
};
CaseFiles find_case_files(const std::string& path);

// A folder holding a file of this name is left out when a folder above it is scanned
// (named itself, it is read): cases/bench, the layer set sized for timing, is not part of
// the corpus `kcheck run cases` checks.
inline constexpr const char* kScanSkipMarker = "KCHECK_SCAN_SKIP";

// Whether a folder scan reads a file of this name as a case file: .yaml or .yml in any case.
bool is_case_file_name(const std::string& path);

}  // namespace kc
