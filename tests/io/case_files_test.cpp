// find_case_files on folders with entries it cannot use: a *.yaml entry that is not a
// regular file is listed (loading it says why), a folder that cannot be listed is a
// problem naming it and the reason; nothing is skipped silently.
#include <dirent.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kc/case_io.h"

namespace kc {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / (name + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string first_message(const std::string& path) {
  const std::vector<LoadedCase> loaded = load_case_file(path);
  return loaded.empty() || loaded[0].c.ok() ? "" : loaded[0].c.status().message();
}

TEST(CaseFiles, BadYamlEntriesAreListedAndSayWhy) {
  const fs::path dir = fresh_dir("kc_case_files_entries_");
  std::ofstream(dir / "ok.yaml") << "op: conv\ninput: {spatial: [4]}\nconv: {out_channels: 1, kernel: 2}\n";
  fs::create_symlink("nowhere.yaml", dir / "dangling.yaml");
  fs::create_symlink(dir / "loop_b.yaml", dir / "loop_a.yaml");
  fs::create_symlink(dir / "loop_a.yaml", dir / "loop_b.yaml");
  ASSERT_EQ(::mkfifo((dir / "fifo.yaml").c_str(), 0600), 0);
  fs::create_directories(dir / "folder");
  fs::create_symlink(dir / "folder", dir / "folder_link.yaml");  // a link to a folder: not followed
  const CaseFiles found = find_case_files(dir.string());
  EXPECT_TRUE(found.problems.empty());
  EXPECT_EQ(found.files, (std::vector<std::string>{(dir / "dangling.yaml").string(), (dir / "fifo.yaml").string(),
                                                   (dir / "loop_a.yaml").string(), (dir / "loop_b.yaml").string(),
                                                   (dir / "ok.yaml").string()}));
  EXPECT_NE(
      first_message((dir / "dangling.yaml").string()).find("a symbolic link to 'nowhere.yaml', which does not exist"),
      std::string::npos);
  EXPECT_NE(first_message((dir / "loop_a.yaml").string()).find("Too many levels of symbolic links"), std::string::npos);
  EXPECT_NE(first_message((dir / "fifo.yaml").string()).find("is not a regular file"), std::string::npos);
  fs::remove_all(dir);
}

TEST(CaseFiles, AnUnreadableFolderIsAProblemNamingIt) {
  const fs::path dir = fresh_dir("kc_case_files_unreadable_");
  fs::create_directories(dir / "locked");
  std::ofstream(dir / "locked" / "bad.yaml") << "op: conv\n";
  fs::permissions(dir / "locked", fs::perms::none);
  DIR* d = ::opendir((dir / "locked").c_str());
  if (d != nullptr) {  // root reads any folder
    ::closedir(d);
    fs::permissions(dir / "locked", fs::perms::owner_all);
    fs::remove_all(dir);
    GTEST_SKIP() << "a folder with mode 000 is readable here (running as root)";
  }
  const CaseFiles found = find_case_files(dir.string());
  fs::permissions(dir / "locked", fs::perms::owner_all);
  EXPECT_TRUE(found.files.empty());
  ASSERT_EQ(found.problems.size(), 1u);
  EXPECT_EQ(found.problems[0].file, (dir / "locked").string());
  EXPECT_EQ(found.problems[0].c.status().message(),
            (dir / "locked").string() + ": cannot list the folder: Permission denied");
  fs::remove_all(dir);
}

// A result's source is "file:line", or the file alone for a file never read (line 0);
// its file is cut off only at a ":<digits>" suffix, since a path may hold ':' itself.
TEST(CaseFiles, ASourceNamesItsFileAndLine) {
  LoadedCase lc;
  lc.file = "dir:a/b.yaml";
  lc.line = 12;
  EXPECT_EQ(source_of(lc), "dir:a/b.yaml:12");
  EXPECT_EQ(source_file_of(source_of(lc)), "dir:a/b.yaml");
  lc.line = 0;
  EXPECT_EQ(source_of(lc), "dir:a/b.yaml");
  EXPECT_EQ(source_file_of(source_of(lc)), "dir:a/b.yaml");
  EXPECT_EQ(source_file_of("x:"), "x:");
  EXPECT_EQ(source_file_of("x:1y"), "x:1y");
}

}  // namespace
}  // namespace kc
