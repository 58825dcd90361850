// Finding case files (kc/case_io.h: find_case_files): a walk without recursion in which
// every folder is read once, known by its device and inode, and links to folders are
// followed only after the folders they sit in have been walked, so that a folder the walk
// reaches anyway keeps its own path. A link to a folder above it is a loop, refused by
// name; every entry not read as a case is counted by its reason.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <queue>
#include <set>

#include "kc/case_io.h"

namespace kc {
namespace {

namespace fs = std::filesystem;

struct FolderId {
  dev_t dev;
  ino_t ino;
  auto operator<=>(const FolderId&) const = default;
};

// Links followed (stat, not lstat): a folder is the same however it is reached.
std::optional<FolderId> folder_id(const fs::path& p, std::error_code& ec) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) {
    ec = std::error_code(errno, std::generic_category());
    return std::nullopt;
  }
  return FolderId{st.st_dev, st.st_ino};
}

// An error met walking a folder: ENOENT is an entry that vanished during the walk (a
// /proc process that ended) and is left out; anything else is reported.
bool vanished(const std::error_code& ec) { return ec == std::errc::no_such_file_or_directory; }

class Walk {
 public:
  explicit Walk(CaseFiles& out) : out_(out) {}
  void run(const fs::path& root);

 private:
  struct Folder {
    fs::path path;
    FolderId id;
    int parent;  // its index in folders_; -1 for the root
  };
  struct Link {
    fs::path path;
    int parent;
    bool operator>(const Link& o) const { return path > o.path; }
  };

  void enter(const fs::path& path, int parent, bool link);
  void list(int folder);
  void visit(const fs::directory_entry& e, int folder, std::set<std::string>& stems, std::vector<fs::path>& expects);
  void count_skipped(const fs::path& dir);
  int above(int folder, const FolderId& id) const;
  void problem(const fs::path& p, Status s);
  void pass_over(const fs::path& p, const PassOverReason& why) { out_.passed_over.push_back({p.string(), why.key}); }

  CaseFiles& out_;
  std::vector<Folder> folders_;
  std::set<FolderId> seen_;
  std::vector<int> todo_;
  std::priority_queue<Link, std::vector<Link>, std::greater<>> links_;  // the least path first: the same every run
};

void Walk::problem(const fs::path& p, Status s) {
  LoadedCase e;
  e.file = p.string();
  e.c = std::move(s);
  out_.problems.push_back(std::move(e));
}

void Walk::run(const fs::path& root) {
  enter(root, -1, false);
  for (;;) {
    while (!todo_.empty()) {
      const int f = todo_.back();
      todo_.pop_back();
      list(f);
    }
    if (links_.empty()) return;
    const Link link = links_.top();
    links_.pop();
    enter(link.path, link.parent, true);
  }
}

// The index of `folder` or the folder above it that is `id`, or -1.
int Walk::above(int folder, const FolderId& id) const {
  for (int f = folder; f >= 0; f = folders_[f].parent) {
    if (folders_[f].id == id) return f;
  }
  return -1;
}

// A folder met (by its own entry, or a link): walked, unless it is a folder above
// (a loop), was walked already (another route), or holds the scan-skip marker (named
// itself, the root is walked all the same).
void Walk::enter(const fs::path& path, int parent, bool link) {
  std::error_code ec;
  const std::optional<FolderId> id = folder_id(path, ec);
  if (!id) {
    if (!vanished(ec)) problem(path, not_found(path.string() + ": cannot inspect it: " + ec.message()));
    return;
  }
  if (const int loop = above(parent, *id); loop >= 0) {
    const std::string again = "'" + folders_[loop].path.string() + "', a folder above it: ";
    const std::string what =
        link ? "a symbolic link to '" + fs::read_symlink(path, ec).string() + "', which is " : "the folder ";
    problem(path, invalid_argument(path.string() + ": " + what + again + "following it would loop"));
    return;
  }
  if (!seen_.insert(*id).second) return;  // reached by another route: read once
  if (parent >= 0 && fs::exists(path / kScanSkipMarker, ec)) {
    count_skipped(path);
    return;
  }
  folders_.push_back({path, *id, parent});
  todo_.push_back(static_cast<int>(folders_.size()) - 1);
}

void Walk::list(int folder) {
  const fs::path dir = folders_[folder].path;  // a copy: folders_ grows meanwhile
  std::set<std::string> stems;                 // of the case files here
  std::vector<fs::path> expects;               // the NAME.expect files here
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) visit(*it, folder, stems, expects);
  if (ec && !vanished(ec)) problem(dir, not_found(dir.string() + ": cannot list the folder: " + ec.message()));
  // NAME.expect beside NAME.yaml is read with it (kcheck run); alone, it is passed over.
  for (const fs::path& e : expects) {
    if (stems.count(e.stem().string()) == 0) pass_over(e, kNotCaseName);
  }
}

// One entry: a folder or a link to one to walk, a case file to list (whatever its type:
// loading a FIFO or a dangling link says why it is refused), or a file passed over.
void Walk::visit(const fs::directory_entry& e, int folder, std::set<std::string>& stems,
                 std::vector<fs::path>& expects) {
  std::error_code ec;
  const fs::file_status own = e.symlink_status(ec);
  if (ec) {
    if (!vanished(ec)) problem(e.path(), not_found(e.path().string() + ": cannot inspect it: " + ec.message()));
    return;
  }
  if (fs::is_directory(own)) {
    enter(e.path(), folder, false);
    return;
  }
  const bool case_name = is_case_file_name(e.path().string());
  if (fs::is_symlink(own)) {
    const fs::file_status target = fs::status(e.path(), ec);
    const bool nowhere = vanished(ec) || ec == std::errc::too_many_symbolic_link_levels || !fs::exists(target);
    if (ec && !nowhere) {
      problem(e.path(), not_found(e.path().string() + ": cannot inspect where it leads: " + ec.message()));
      return;
    }
    if (!nowhere && fs::is_directory(target)) {
      links_.push({e.path(), folder});
      return;
    }
    if (nowhere && !case_name) {
      pass_over(e.path(), kLeadsNowhere);
      return;
    }
  }
  if (case_name) {
    out_.files.push_back(e.path().string());
    stems.insert(e.path().stem().string());
  } else if (e.path().extension() == ".expect") {
    expects.push_back(e.path());
  } else {
    pass_over(e.path(), kNotCaseName);
  }
}

// Every entry below a folder with the scan-skip marker, the marker included, links not
// followed: what the scan leaves out is counted, not read.
void Walk::count_skipped(const fs::path& dir) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (!fs::is_directory(it->symlink_status(type_ec))) pass_over(it->path(), kUnderScanSkip);
  }
}

}  // namespace

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
    if (!fs::is_directory(path, ec)) return {{path}, {}, {}};
    Walk(out).run(path);
  } catch (const std::exception& e) {  // out of memory while listing: say so, keep what was found
    LoadedCase problem;
    problem.file = path;
    problem.c = internal_error(path + ": listing the case files failed: " + e.what());
    out.problems.push_back(std::move(problem));
  }
  std::sort(out.files.begin(), out.files.end());
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const LoadedCase& a, const LoadedCase& b) { return a.file < b.file; });
  std::sort(out.passed_over.begin(), out.passed_over.end(),
            [](const PassedOverFile& a, const PassedOverFile& b) { return a.path < b.path; });
  return out;
}

int64_t passed_over_count(const PassedOver& counts, const PassOverReason& why) {
  const auto it = counts.find(why.key);
  return it == counts.end() ? 0 : it->second;
}

std::string passed_over_text(const PassedOver& counts) {
  int64_t total = 0;
  std::string parts;
  for (const PassOverReason& why : kPassOverReasons) {
    const int64_t n = passed_over_count(counts, why);
    if (n == 0) continue;
    total += n;
    parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(why.text);
  }
  if (total == 0) return {};
  return std::to_string(total) + (total == 1 ? " file" : " files") + " passed over: " + parts;
}

}  // namespace kc
