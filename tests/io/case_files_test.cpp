// find_case_files on folders with entries it cannot use: a *.yaml entry that is not a
// regular file is listed (loading it says why), a folder that cannot be listed is a
// problem naming it and the reason, a link to a folder is followed (a loop refused by
// name), and every other file is counted with the reason it was passed over; nothing is
// skipped silently.
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
  fs::create_symlink(dir / "folder", dir / "folder_link.yaml");  // a link to a folder: walked, not read as a file
  const CaseFiles found = find_case_files(dir.string());
  EXPECT_TRUE(found.problems.empty());
  EXPECT_TRUE(found.passed_over.empty());
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

void write_case(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "op: conv\ninput: {spatial: [4]}\nconv: {out_channels: 1, kernel: 2}\n";
}

// A link to a folder is walked, inside the scanned folder or out of it; a folder reached
// by two routes (its own entry and a link, or two links) is read once, by its own path.
TEST(CaseFiles, LinksToFoldersAreFollowedAndEachFolderReadOnce) {
  const fs::path dir = fresh_dir("kc_case_files_links_");
  write_case(dir / "scan" / "real" / "a.yaml");
  write_case(dir / "outside" / "b.yaml");
  write_case(dir / "scan" / "x" / "c.yaml");
  write_case(dir / "scan" / "y" / "d.yaml");
  fs::create_symlink("../outside", dir / "scan" / "ext");
  fs::create_symlink("../outside", dir / "scan" / "ext2");  // the same folder again
  fs::create_symlink("real", dir / "scan" / "again");       // reached by its own entry too
  fs::create_symlink("../y", dir / "scan" / "x" / "to_y");  // x and y point at each other: no loop,
  fs::create_symlink("../x", dir / "scan" / "y" / "to_x");  // neither lies above the other
  const CaseFiles found = find_case_files((dir / "scan").string());
  EXPECT_TRUE(found.problems.empty()) << found.problems[0].c.status().message();
  EXPECT_TRUE(found.passed_over.empty());
  const fs::path scan = dir / "scan";
  EXPECT_EQ(found.files,
            (std::vector<std::string>{(scan / "ext" / "b.yaml").string(), (scan / "real" / "a.yaml").string(),
                                      (scan / "x" / "c.yaml").string(), (scan / "y" / "d.yaml").string()}));
  fs::remove_all(dir);
}

// A link to the folder that holds it, or to one above, would be walked for ever: it is a
// problem naming the link, where it leads and the folder it repeats; the rest is read.
TEST(CaseFiles, ALinkToAFolderAboveIsALoopNamedAsAProblem) {
  const fs::path dir = fresh_dir("kc_case_files_loop_");
  write_case(dir / "sub" / "c.yaml");
  fs::create_symlink("..", dir / "sub" / "up");
  fs::create_symlink(".", dir / "self");
  const CaseFiles found = find_case_files(dir.string());
  EXPECT_EQ(found.files, std::vector<std::string>{(dir / "sub" / "c.yaml").string()});
  ASSERT_EQ(found.problems.size(), 2u);
  EXPECT_EQ(found.problems[0].file, (dir / "self").string());
  EXPECT_EQ(found.problems[0].c.status().message(), (dir / "self").string() + ": a symbolic link to '.', which is '" +
                                                        dir.string() + "', a folder above it: following it would loop");
  EXPECT_EQ(found.problems[1].c.status().message(), (dir / "sub" / "up").string() +
                                                        ": a symbolic link to '..', which is '" + dir.string() +
                                                        "', a folder above it: following it would loop");
  EXPECT_EQ(found.problems[1].c.status().code(), StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

// Every file not read as a case is counted with its reason: not *.yaml/*.yml (a lone
// NAME.expect too; one beside NAME.yaml is read with it), every file below a folder with
// the scan-skip marker, the marker included, and a link leading nowhere. Named itself, a
// marked folder is read.
TEST(CaseFiles, FilesPassedOverAreCountedWithTheirReason) {
  const fs::path dir = fresh_dir("kc_case_files_passed_");
  write_case(dir / "a.yaml");
  std::ofstream(dir / "a.expect") << "an error\n";
  std::ofstream(dir / "lonely.expect") << "an error\n";
  std::ofstream(dir / "notes.txt") << "notes\n";
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  fs::create_symlink("nowhere", dir / "dangling");
  write_case(dir / "bench" / "x.yaml");
  std::ofstream(dir / "bench" / kScanSkipMarker) << "timed, not checked\n";
  write_case(dir / "bench" / "deep" / "y.yaml");
  fs::create_symlink("bench", dir / "to_bench");  // a marked folder by a link: counted once
  const CaseFiles found = find_case_files(dir.string());
  EXPECT_TRUE(found.problems.empty());
  EXPECT_EQ(found.files, std::vector<std::string>{(dir / "a.yaml").string()});
  std::vector<std::pair<std::string, std::string>> over;
  PassedOver counts;
  for (const PassedOverFile& f : found.passed_over) {
    over.emplace_back(fs::path(f.path).lexically_relative(dir).string(), std::string(f.reason));
    ++counts[std::string(f.reason)];
  }
  EXPECT_EQ(over, (std::vector<std::pair<std::string, std::string>>{{"bench/KCHECK_SCAN_SKIP", "scan_skip"},
                                                                    {"bench/deep/y.yaml", "scan_skip"},
                                                                    {"bench/x.yaml", "scan_skip"},
                                                                    {"dangling", "broken_link"},
                                                                    {"lonely.expect", "not_case_file"},
                                                                    {"notes.txt", "not_case_file"},
                                                                    {"pipe", "not_case_file"}}));
  EXPECT_EQ(passed_over_text(counts),
            "7 files passed over: 3 not *.yaml/*.yml, 3 under a folder with the scan-skip marker (KCHECK_SCAN_SKIP), "
            "1 leading nowhere (dangling or looping symbolic links)");
  const CaseFiles named = find_case_files((dir / "bench").string());
  EXPECT_EQ(named.files.size(), 2u);
  ASSERT_EQ(named.passed_over.size(), 1u);
  EXPECT_EQ(named.passed_over[0].reason, kNotCaseName.key);
  fs::remove_all(dir);
}

TEST(CaseFiles, PassedOverTextCountsOneOrMany) {
  EXPECT_EQ(passed_over_text({}), "");
  EXPECT_EQ(passed_over_text({{"not_case_file", 0}}), "");
  EXPECT_EQ(passed_over_text({{"reproducer", 1}}),
            "1 file passed over: 1 in the report's failures folder (this command's own reproducers)");
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
