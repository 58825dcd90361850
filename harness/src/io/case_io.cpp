// Case files: finding them, reading them (one case, or `cases:` with `defaults:`), and
// turning every problem into a located error entry. This is the I/O edge: yaml-cpp's
// exceptions (and any other) are caught here and never leave.
#include "kc/case_io.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "core/check_table.h"
#include "core/validate.h"
#include "io/case_yaml.h"

namespace kc {
namespace {

namespace fs = std::filesystem;
using io::Context;
using io::Value;

LoadedCase error_entry(const std::string& file, int line, Status status) {
  LoadedCase e;
  e.file = file;
  e.line = line;
  e.c = std::move(status);
  return e;
}

std::string where(const std::string& file, int line) { return file + ":" + std::to_string(line); }

// The line of the field a validate() message starts with ("conv.padding[0][1]: ..."),
// trying shorter paths when the exact one was not read; `fallback` when none matches.
int locate(const Context& ctx, const std::string& message, int fallback) {
  const size_t colon = message.find(':');
  if (colon == std::string::npos || colon == 0) return fallback;
  std::string path = message.substr(0, colon);
  if (path.rfind("stack layer ", 0) == 0) path = "stack";  // a layer's error: the stack's line
  const bool is_path = std::all_of(path.begin(), path.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '[' || ch == ']';
  });
  if (!is_path) return fallback;
  // conv_bias_relu's params are written under `conv:`.
  if (path.rfind("conv_bias_relu", 0) == 0) path = "conv" + path.substr(14);
  while (!path.empty()) {
    if (auto it = ctx.lines.find(path); it != ctx.lines.end()) return it->second;
    const size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos) break;
    path.resize(cut);
  }
  return fallback;
}

// One case: its fields, then validate(), each error located.
LoadedCase load_one(const std::string& file, const YAML::Node& node, const YAML::Node& defaults) {
  Context ctx{file, {}};
  const int line = io::node_line(node, 1);
  std::vector<YAML::Node> layers = {node};
  if (defaults.IsDefined() && defaults.IsMap()) layers.push_back(defaults);
  const Value v(&ctx, "", layers, line);
  LoadedCase entry;
  entry.file = file;
  entry.line = line;
  StatusOr<Case> c = io::read_case(v, &entry.expect);
  if (!c.ok()) {
    entry.c = c.status();
    return entry;
  }
  if (Status s = validate(*c); !s.ok()) {
    entry.c = s.with_context(where(file, locate(ctx, s.message(), line)));
    if (is_stack(*c) && c->tensors.empty() && c->expected.empty()) entry.unvalidated = std::move(*c);
    return entry;
  }
  if (Status s = validate_checks(*c, !v.own("checks")); !s.ok()) {
    entry.c = s.with_context(where(file, locate(ctx, s.message(), line)));
    return entry;
  }
  // Shared defaults mean "where they apply": the case keeps those, so that its reproducer
  // names no check that the reader refuses on a case of its own.
  if (!v.own("checks")) c->checks = checks_that_apply(*c);
  c->source = where(file, line);
  entry.c = std::move(c);
  return entry;
}

// An alias (`- *c`) costs a few bytes of YAML and a full copy of the tensors it names,
// so the file's inline values are counted as they are read, aliases each time.
int64_t inline_values(const LoadedCase& one) {
  if (!one.c.ok()) return 0;
  int64_t n = 0;
  for (const auto& [name, t] : one.c->tensors) n += t.size();
  for (const auto& [name, t] : one.c->expected) n += t.size();
  return n;
}

Status too_many_values(const std::string& file, int line) {
  return resource_exhausted(where(file, line) + ": the file's inline tensors hold more than " +
                            std::to_string(kMaxFileInlineValues) +
                            " values in all up to this case (an alias counts each time it is used); split the file");
}

std::vector<LoadedCase> load_document(const std::string& file, const YAML::Node& doc) {
  Context file_ctx{file, {}};
  const Value root(&file_ctx, "", {doc}, io::node_line(doc, 1));
  if (!root.is_map()) {
    return {error_entry(file, root.line(), root.type_error("a case (a map of case fields) or cases: [...]"))};
  }
  if (!root.own("cases")) return {load_one(file, doc, YAML::Node())};
  if (Status s = root.check_keys({"cases", "defaults"}); !s.ok()) return {error_entry(file, root.line(), s)};
  const Value cases = *root.get("cases");
  const std::optional<Value> defaults = root.get("defaults");
  if (defaults && !defaults->is_map()) {
    return {error_entry(file, defaults->line(), defaults->type_error("a map of case fields"))};
  }
  if (!cases.is_sequence() || cases.node().size() == 0) {
    return {error_entry(file, cases.line(), cases.type_error("a non-empty list of cases"))};
  }
  std::vector<LoadedCase> out;
  int64_t values = 0;  // inline tensor values read so far in the file
  for (const Value& item : cases.items()) {
    if (!item.is_map()) {
      out.push_back(error_entry(file, item.line(), item.type_error("a case (a map of case fields)")));
      continue;
    }
    if (values > kMaxFileInlineValues) {  // refused unread: reading is what costs
      out.push_back(error_entry(file, item.line(), too_many_values(file, item.line())));
      continue;
    }
    LoadedCase one = load_one(file, item.node(), defaults ? defaults->node() : YAML::Node());
    values += inline_values(one);
    if (values > kMaxFileInlineValues) one = error_entry(file, one.line, too_many_values(file, one.line));
    out.push_back(std::move(one));
  }
  return out;
}

// Records, per document, whether it is a lone null and where its first event is.
class DocumentScanner : public YAML::EventHandler {
 public:
  struct Document {
    bool only_null = true;
    int pos = -1;
    YAML::Mark mark;
  };
  std::vector<Document> docs;

  void OnDocumentStart(const YAML::Mark&) override { docs.emplace_back(); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { event(m, true); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { event(m, false); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override {
    event(m, false);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    event(m, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    event(m, false);
  }
  void OnMapEnd() override {}

 private:
  void event(const YAML::Mark& m, bool is_null) {
    if (docs.empty()) docs.emplace_back();
    Document& d = docs.back();
    if (d.pos < 0) d.pos = m.pos, d.mark = m;
    d.only_null = d.only_null && is_null;
  }
};

// The documents the text holds (counting stops at 3). yaml-cpp 0.7
// never finishes LoadAll() on a stray top-level ',' (jbeder/yaml-cpp#1040, fixed
// upstream by PR #1319): it reports the same empty document again and again. So the
// documents are counted here with a cap, and a repeated empty document at the same
// position is thrown as the syntax error it is.
std::vector<DocumentScanner::Document> scan_documents(std::string_view text) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DocumentScanner scan;
  while (scan.docs.size() < 3 && parser.HandleNextDocument(scan)) {
    const size_t n = scan.docs.size();
    if (n >= 2 && scan.docs[n - 1].only_null && scan.docs[n - 2].only_null &&
        scan.docs[n - 1].pos == scan.docs[n - 2].pos) {
      const YAML::Mark m = scan.docs[n - 1].mark;
      const bool inside = m.pos >= 0 && static_cast<size_t>(m.pos) < text.size();
      throw YAML::ParserException(
          m, "unexpected " + (inside ? io::quote_for_message(text.substr(static_cast<size_t>(m.pos), 1)) : "token"));
    }
  }
  return scan.docs;
}

std::vector<LoadedCase> parse_text(std::string_view text, const std::string& file) {
  const std::vector<DocumentScanner::Document> docs = scan_documents(text);
  if (docs.size() > 1) {
    const int line = std::max(docs[1].mark.line + 1, 1);
    const std::string count = docs.size() > 2 ? "3 or more" : "2";
    return {error_entry(file, line,
                        invalid_argument(where(file, line) + ": the file holds " + count +
                                         " YAML documents; put several cases under cases:"))};
  }
  const YAML::Node doc = YAML::Load(std::string(text));
  if (docs.empty() || doc.IsNull()) {
    return {error_entry(file, 1, invalid_argument(where(file, 1) + ": empty file: expected a case or cases: [...]"))};
  }
  return load_document(file, doc);
}

// An error met walking a folder: ENOENT is an entry that vanished during the walk (a
// /proc process that ended) and is left out; anything else is reported.
bool vanished(const std::error_code& ec) { return ec == std::errc::no_such_file_or_directory; }

LoadedCase walk_problem(const fs::path& p, const std::string& what, const std::error_code& ec) {
  return error_entry(p.string(), 0, not_found(p.string() + ": " + what + ": " + ec.message()));
}

// One folder of the walk: its *.yaml entries into out.files (whatever their type, see
// find_case_files), its sub-folders onto `todo`, a listing error into out.problems.
void list_folder(const fs::path& dir, std::vector<fs::path>& todo, CaseFiles& out) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    const fs::file_status own = it->symlink_status(type_ec);
    if (type_ec) {
      if (!vanished(type_ec)) out.problems.push_back(walk_problem(it->path(), "cannot inspect it", type_ec));
      continue;
    }
    if (fs::is_directory(own)) {
      if (!fs::exists(it->path() / kScanSkipMarker, type_ec)) todo.push_back(it->path());
    } else if (is_case_file_name(it->path()) && !(fs::is_symlink(own) && fs::is_directory(it->path(), type_ec))) {
      out.files.push_back(it->path().string());
    }
  }
  if (ec && !vanished(ec)) out.problems.push_back(walk_problem(dir, "cannot list the folder", ec));
}

}  // namespace

namespace {

// A control character YAML does not allow (C0 but tab, line feed and carriage return;
// DEL), named with its line and column: the parser would report it elsewhere and as
// something else (a NUL as "unknown escape character" further on).
std::optional<LoadedCase> control_character(std::string_view text, const std::string& file) {
  int line = 1, column = 1;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", c);
      return error_entry(
          file, line,
          invalid_argument(where(file, line) + ": invalid YAML at column " + std::to_string(column) +
                           ": a control byte " + code + (c == 0 ? " (NUL)" : "") + ", which YAML does not allow"));
    }
    column = c == '\n' ? 1 : column + 1;
    line += c == '\n';
  }
  return std::nullopt;
}

}  // namespace

std::vector<LoadedCase> parse_cases(std::string_view yaml_text, const std::string& file_name) {
  const std::string file = file_name.empty() ? "<string>" : file_name;
  if (std::optional<LoadedCase> bad = control_character(yaml_text, file)) return {std::move(*bad)};
  try {
    return parse_text(yaml_text, file);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() || e.mark.line < 0 ? 1 : e.mark.line + 1;
    std::string msg = where(file, line) + ": invalid YAML";
    if (!e.mark.is_null() && e.mark.column >= 0) msg += " at column " + std::to_string(e.mark.column + 1);
    // yaml-cpp 0.7 says only "bad file" when lists and maps nest past its depth limit.
    if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e)) {
      return {error_entry(
          file, line,
          invalid_argument(msg + ": nesting too deep: lists and maps reach " + std::to_string(deep->depth()) +
                           " levels, the parser's limit (a case nests a few)"))};
    }
    return {error_entry(file, line, invalid_argument(msg + ": " + e.msg))};
  } catch (const std::exception& e) {
    return {error_entry(file, 0, internal_error(file + ": reading the case file failed: " + e.what()))};
  } catch (...) {
    return {error_entry(file, 0, internal_error(file + ": reading the case file failed"))};
  }
}

std::vector<LoadedCase> load_case_file(const std::string& path) {
  try {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {  // e.g. a symlink loop
      return {error_entry(path, 0, not_found(path + ": " + ec.message()))};
    }
    if (ec || !fs::exists(st)) {
      std::error_code link_ec;
      if (fs::is_symlink(fs::symlink_status(path, link_ec))) {
        const std::string target = fs::read_symlink(path, link_ec).string();
        return {error_entry(path, 0, not_found(path + ": a symbolic link to '" + target + "', which does not exist"))};
      }
      return {error_entry(path, 0, not_found(path + ": no such file"))};
    }
    if (fs::is_directory(st)) {
      return {error_entry(path, 0, invalid_argument(path + ": is a directory, not a case file"))};
    }
    if (!fs::is_regular_file(st)) {  // a FIFO would block, /dev/zero never ends
      return {error_entry(path, 0, invalid_argument(path + ": is not a regular file (a device, FIFO or socket)"))};
    }
    const uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > static_cast<uintmax_t>(kMaxCaseFileBytes)) {
      return {error_entry(
          path, 0,
          resource_exhausted(path + ": " + std::to_string(size >> 20) + " MiB is over the case file limit of " +
                             std::to_string(kMaxCaseFileBytes >> 20) + " MiB"))};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return {error_entry(path, 0, not_found(path + ": cannot open the file"))};
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return {error_entry(path, 0, not_found(path + ": cannot read the file"))};
    return parse_cases(text, path);
  } catch (const std::exception& e) {
    return {error_entry(path, 0, internal_error(path + ": reading the case file failed: " + e.what()))};
  } catch (...) {
    return {error_entry(path, 0, internal_error(path + ": reading the case file failed"))};
  }
}

// .yaml or .yml in any case (CASE.YAML, a.Yml): a folder scan that skipped such a file
// would leave its cases out without a word.
bool is_case_file_name(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return ext == ".yaml" || ext == ".yml";
}

CaseFiles find_case_files(const std::string& path) {
  CaseFiles out;
  try {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return {{path}, {}};
    std::vector<fs::path> todo = {path};  // folders still to list (no recursion: any depth)
    while (!todo.empty()) {
      const fs::path dir = std::move(todo.back());
      todo.pop_back();
      list_folder(dir, todo, out);
    }
  } catch (const std::exception& e) {  // out of memory while listing: say so, keep what was found
    out.problems.push_back(error_entry(path, 0, internal_error(path + ": listing the case files failed: " + e.what())));
  }
  std::sort(out.files.begin(), out.files.end());
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const LoadedCase& a, const LoadedCase& b) { return a.file < b.file; });
  return out;
}

std::string source_of(const LoadedCase& lc) { return lc.line > 0 ? lc.file + ":" + std::to_string(lc.line) : lc.file; }

std::string_view source_file_of(std::string_view source) {
  const size_t colon = source.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == source.size()) return source;
  for (size_t i = colon + 1; i < source.size(); ++i) {
    if (source[i] < '0' || source[i] > '9') return source;
  }
  return source.substr(0, colon);
}

}  // namespace kc
