// Input files read alike for every kind (input_file.h): the file's status first, then a
// non-blocking open whose own status is checked again (a file swapped for a FIFO in
// between is refused, not waited on), then a read capped at the limit (a file that grows
// meanwhile stops there). yaml-cpp's exceptions, and std::bad_alloc, end here.
#include "io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <sstream>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "io/case_yaml.h"
#include "kc/case_io.h"

namespace kc::io {
namespace {

namespace fs = std::filesystem;

std::string type_name(fs::file_type t) {
  switch (t) {
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "neither a file nor a folder";
  }
}

Status too_large(const std::string& path, std::string_view kind, uintmax_t bytes) {
  return resource_exhausted(path + ": " + std::to_string(bytes) + " bytes, over the " + std::string(kind) +
                            " limit of " + std::to_string(kMaxCaseFileBytes >> 20) + " MiB");
}

// What the path's status says, links followed, before anything opens it.
Status check_status(const std::string& path, std::string_view kind) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return not_found(path + ": " + ec.message());  // a link loop
  std::error_code link_ec;
  const bool link = fs::is_symlink(fs::symlink_status(path, link_ec));
  const std::string target = link ? fs::read_symlink(path, link_ec).string() : "";
  if (ec || !fs::exists(st)) {
    if (link) return not_found(path + ": a symbolic link to '" + target + "', which does not exist");
    return not_found(path + ": no such file");
  }
  const std::string via = link ? " (a symbolic link to '" + target + "')" : "";
  if (fs::is_directory(st)) return invalid_argument(path + ": is a directory, not a " + std::string(kind) + via);
  if (!fs::is_regular_file(st)) {  // a FIFO would block, /dev/zero never ends
    return invalid_argument(path + ": is not a regular file: " + type_name(st.type()) + via);
  }
  return ok_status();
}

// Closes the descriptor on every way out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

StatusOr<std::string> read_capped(const std::string& path, std::string_view kind) {
  const Descriptor d{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (d.fd < 0) return not_found(path + ": cannot open the file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(d.fd, &st) != 0) return not_found(path + ": cannot inspect the file: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return invalid_argument(path + ": is not a regular file (it changed while opened)");
  if (st.st_size > kMaxCaseFileBytes) return too_large(path, kind, static_cast<uintmax_t>(st.st_size));
  std::string text;
  std::vector<char> buf(64 << 10);
  for (;;) {
    const ssize_t n = ::read(d.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return not_found(path + ": cannot read the file: " + std::strerror(errno));
    if (n == 0) return text;
    text.append(buf.data(), static_cast<size_t>(n));
    if (text.size() > static_cast<size_t>(kMaxCaseFileBytes)) return too_large(path, kind, text.size());
  }
}

// A control character YAML does not allow (C0 but tab, line feed and carriage return;
// DEL), named with its line and column: the parser would report it elsewhere and as
// something else (a NUL as "unknown escape character" further on).
Status control_character(std::string_view text, const std::string& file, int* line) {
  int column = 1;
  *line = 1;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", c);
      return invalid_argument(file + ":" + std::to_string(*line) + ": invalid YAML at column " +
                              std::to_string(column) + ": a control byte " + code + (c == 0 ? " (NUL)" : "") +
                              ", which YAML does not allow");
    }
    column = c == '\n' ? 1 : column + 1;
    *line += c == '\n';
  }
  *line = 0;
  return ok_status();
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
          m, "unexpected " + (inside ? quote_for_message(text.substr(static_cast<size_t>(m.pos), 1)) : "token"));
    }
  }
  return scan.docs;
}

}  // namespace

StatusOr<std::string> read_input_file(const std::string& path, std::string_view kind) {
  try {
    KC_RETURN_IF_ERROR(check_status(path, kind));
    return read_capped(path, kind);
  } catch (...) {
    int line = 0;
    return exception_status(path, kind, &line);
  }
}

StatusOr<YAML::Node> parse_one_document(std::string_view text, const std::string& file, std::string_view kind,
                                        std::string_view several, int* line) {
  KC_RETURN_IF_ERROR(control_character(text, file, line));
  try {
    const std::vector<DocumentScanner::Document> docs = scan_documents(text);
    if (docs.size() > 1) {
      *line = std::max(docs[1].mark.line + 1, 1);
      const std::string count = docs.size() > 2 ? "3 or more" : "2";
      return invalid_argument(file + ":" + std::to_string(*line) + ": the file holds " + count + " YAML documents; " +
                              std::string(several));
    }
    if (docs.empty()) return YAML::Node();
    return YAML::Load(std::string(text));
  } catch (...) {
    return exception_status(file, kind, line);
  }
}

Status exception_status(const std::string& file, std::string_view kind, int* line) {
  *line = 0;
  const std::string what = std::string(kind);
  try {
    throw;
  } catch (const YAML::Exception& e) {
    *line = e.mark.is_null() || e.mark.line < 0 ? 1 : e.mark.line + 1;
    std::string msg = file + ":" + std::to_string(*line) + ": invalid YAML";
    if (!e.mark.is_null() && e.mark.column >= 0) msg += " at column " + std::to_string(e.mark.column + 1);
    // yaml-cpp 0.7 says only "bad file" when lists and maps nest past its depth limit.
    if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e)) {
      return invalid_argument(msg + ": nesting too deep: lists and maps reach " + std::to_string(deep->depth()) +
                              " levels, the parser's limit (a " + what + " nests a few)");
    }
    return invalid_argument(msg + ": " + e.msg);
  } catch (const std::bad_alloc&) {
    // Reached when memory is short (a limit, a crowded host): yaml-cpp holds about 500
    // bytes per value, so a file within the size limit can still need a GiB.
    return resource_exhausted(file + ": out of memory while reading the " + what +
                              " (its YAML takes about 500 bytes per value); free memory or split the file");
  } catch (const std::exception& e) {
    return internal_error(file + ": reading the " + what + " failed: " + e.what());
  } catch (...) {
    return internal_error(file + ": reading the " + what + " failed");
  }
}

}  // namespace kc::io
