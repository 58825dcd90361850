// Input files (io/input_file.h) read alike for case and waiver files: refusals name the
// kind, and running out of memory while a file within the size limit is parsed (yaml-cpp
// takes about 500 bytes per value) is resource_exhausted with the reason, never an abort.
#include "io/input_file.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/waiver_reader.h"
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

TEST(InputFile, RefusalsNameTheKind) {
  const fs::path dir = fresh_dir("kc_input_file_");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::ofstream(dir / "ok.yaml") << "a: 1\n";
  ::alarm(20);  // a FIFO opened for reading would wait for ever: fail instead
  EXPECT_EQ(io::read_input_file((dir / "fifo").string(), "case file").status().message(),
            (dir / "fifo").string() + ": is not a regular file: a FIFO");
  ::alarm(0);
  EXPECT_EQ(io::read_input_file(dir.string(), "waiver file").status().message(),
            dir.string() + ": is a directory, not a waiver file");
  EXPECT_EQ(io::read_input_file(dir.string(), "case file").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(io::read_input_file((dir / "none").string(), "case file").status().code(), StatusCode::kNotFound);
  const StatusOr<std::string> ok = io::read_input_file((dir / "ok.yaml").string(), "case file");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(*ok, "a: 1\n");
  fs::remove_all(dir);
}

// Reserved address space now, in bytes.
size_t mapped_bytes() {
  size_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  return pages * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// Runs in a death test's child: caps the address space a little above what is mapped,
// so that the parse runs out of memory, then exits 0 when `read` returned a
// resource_exhausted Status (its message on stderr), 1 otherwise.
template <class Read>
void out_of_memory_child(Read read) {
  const rlimit cap{mapped_bytes() + (64u << 20), RLIM_INFINITY};
  if (::setrlimit(RLIMIT_AS, &cap) != 0) std::_Exit(3);
  const Status s = read();
  std::fprintf(stderr, "%s\n", s.message().c_str());
  std::_Exit(s.code() == StatusCode::kResourceExhausted ? 0 : 1);
}

// A file just within the size limit that takes about a GiB to parse: 2 bytes a value.
std::string many_values(const fs::path& path, const std::string& head, const std::string& tail) {
  std::string text = head;
  while (text.size() + tail.size() + 2 < static_cast<size_t>(kMaxCaseFileBytes)) text += "1,";
  text += "1" + tail;
  std::ofstream(path) << text;
  return path.string();
}

TEST(InputFileDeathTest, RunningOutOfMemoryIsAStatusNotAnAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const fs::path dir = fresh_dir("kc_input_oom_");
  const std::string waivers = many_values(dir / "waivers.yaml", "waivers: [", "]\n");
  const std::string cases = many_values(dir / "case.yaml", "cases: [", "]\n");
  EXPECT_EXIT(out_of_memory_child([&] { return load_waivers(waivers).status(); }), ::testing::ExitedWithCode(0),
              "waivers.yaml: out of memory while reading the waiver file");
  EXPECT_EXIT(out_of_memory_child([&] { return load_case_file(cases).at(0).c.status(); }), ::testing::ExitedWithCode(0),
              "case.yaml: out of memory while reading the case file");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kc
