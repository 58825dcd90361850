// Internal to kc_io: reading an input file (a case file, a waiver file) equally strictly
// for every kind, and parsing its one YAML document. A file is read only when it is a
// regular file of at most kMaxCaseFileBytes: a folder, FIFO, device or socket (or a link
// to one) is refused from its status, and the open never waits on a FIFO. Every refusal
// and every exception of the parse, out of memory included, becomes a Status naming the
// file, and its line where one applies.
#pragma once

#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "kc/status.h"

namespace kc::io {

// The whole text of `path`; `kind` ("case file", "waiver file") names it in messages.
// Codes: not_found (missing, a dangling or looping link, unreadable), invalid_argument
// (not a regular file), resource_exhausted (over the limit, out of memory).
StatusOr<std::string> read_input_file(const std::string& path, std::string_view kind);

// The one YAML document `text` holds (a null node when it holds none), or why not, with
// *line the error's 1-based line (0 when none applies). `several` says what to write
// instead of a second document ("put several cases under cases:").
StatusOr<YAML::Node> parse_one_document(std::string_view text, const std::string& file, std::string_view kind,
                                        std::string_view several, int* line);

// For a catch (...) block while `file` is read: the exception in flight as a Status
// (YAML syntax with its line and column, nesting past the parser's limit, out of memory
// as resource_exhausted, anything else internal_error), *line where one applies.
Status exception_status(const std::string& file, std::string_view kind, int* line);

}  // namespace kc::io
