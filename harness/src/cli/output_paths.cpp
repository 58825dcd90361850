// The files and folders kcheck writes, checked before a run: a long run must not be
// lost to a typo at its end, and a report must never be written over a case file.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>

#include "cli.h"
#include "kc/case_io.h"

namespace kc::cli {
namespace fs = std::filesystem;
namespace {

// The nearest folder on the way to `path` that exists, from the absolute path so that a
// relative one ends at the working folder (the missing ones below it are created on
// writing); `..` is left for the system to resolve, through symbolic links as it will
// on writing.
fs::path nearest_existing(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path.empty() ? fs::path(".") : path, ec);
  while (!fs::exists(p, ec) && p.has_relative_path()) p = p.parent_path();
  return p;
}

// The absolute path with links resolved as far as it exists (from the absolute path: a
// relative one whose first part does not exist would stay relative). `..` is resolved
// after the links before it, as the system does on writing (not folded as text first),
// and a dangling link at the end is followed to the file that writing it would create.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(absolute, ec) && !fs::exists(absolute, ec); ++hops) {
    const fs::path target = fs::read_symlink(absolute, ec);
    if (ec) break;
    absolute = target.is_absolute() ? target : absolute.parent_path() / target;
  }
  const fs::path p = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : p;
}

}  // namespace

// Creates the file's folders and the file itself, then removes the file: what the run will
// write after its work must be writable before it (access() says yes to root on /proc
// and on a read-only mount).
std::string probe_write(const std::string& flag, const std::string& path) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return flag + ": '" + path + "' cannot be written: " + std::strerror(errno);
  ::close(fd);
  ::unlink(path.c_str());
  return {};
}

std::string output_file_problem(const std::string& flag, const std::string& given) {
  std::error_code ec;
  if (given.empty()) return flag + ": expected a file name, got ''";
  // A dangling link is written through: the file it names is the one to judge.
  const bool dangling = fs::is_symlink(given, ec) && !fs::exists(given, ec);
  const std::string path = dangling ? resolved(given).string() : given;
  if (dangling && !fs::is_directory(fs::path(path).parent_path(), ec)) {  // writing creates no folder there
    return flag + ": '" + given + "' is a link to '" + path + "', whose folder does not exist";
  }
  if (fs::is_directory(path, ec)) return flag + ": '" + path + "' is a folder; give a file name";
  const fs::path name = fs::path(path).filename();
  if (name.empty() || name == "." || name == "..") return flag + ": '" + path + "' names no file; give a file name";
  if (fs::exists(path, ec)) {
    return ::access(path.c_str(), W_OK) == 0 ? "" : flag + ": '" + path + "' exists and cannot be written";
  }
  const fs::path parent = nearest_existing(fs::path(path).parent_path());
  if (!fs::is_directory(parent, ec)) {
    return flag + ": '" + parent.string() + "' is not a folder, so '" + path + "' cannot be written";
  }
  if (::access(parent.c_str(), W_OK) != 0) return flag + ": cannot write in '" + parent.string() + "'";
  return probe_write(flag, path);
}

std::string output_folder_problem(const std::string& flag, const std::string& role, const std::string& dir) {
  std::error_code ec;
  const std::string named = flag + ": " + role + " '" + dir + "'";
  if (dir.empty()) return flag + ": expected a folder name, got ''";
  const fs::path existing = nearest_existing(dir);
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) return named + " is a file, not a folder";
  if (!fs::is_directory(existing, ec)) {
    return named + " cannot be created: '" + existing.string() + "' is not a folder";
  }
  // Creating a file needs write and search permission on the folder that holds it.
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return named + " cannot be written: no permission to write in '" + existing.string() + "'";
  }
  return {};
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const bool a_exists = fs::exists(a, ea), b_exists = fs::exists(b, eb);
  if (a_exists && b_exists) return fs::equivalent(a, b, ea);  // hard links and symbolic links too
  return !a_exists && !b_exists && resolved(a) == resolved(b);
}

bool read_as_input(const std::string& path, const std::string& folder) {
  const fs::path where = resolved(path);
  return (is_case_file_name(where.string()) || where.extension() == ".expect") && inside_folder(path, folder);
}

bool inside_folder(const std::string& path, const std::string& folder) {
  const fs::path rel = resolved(path).lexically_relative(resolved(folder));
  return !rel.empty() && *rel.begin() != ".." && rel != ".";
}

std::string outputs_clash(const std::vector<Output>& outputs, const std::vector<std::string>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Output& out = outputs[i];
    for (const std::string& in : inputs) {
      if (same_file(out.path, in)) {
        return out.flag + ": '" + out.path + "' is the input case file '" + in +
               "'; writing it would overwrite the case, so give another file name";
      }
    }
    for (size_t k = 0; k < i; ++k) {
      if (same_file(out.path, outputs[k].path)) {
        return outputs[k].flag + " and " + out.flag + " name the same file ('" + outputs[k].path + "' and '" +
               out.path + "'); one would overwrite the other, so give each its own";
      }
    }
  }
  return {};
}

}  // namespace kc::cli
