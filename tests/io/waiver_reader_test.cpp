// Waiver files: a valid file reads with each entry's file:line; each mistake is refused
// naming the file, line, entry, field and reason, as strictly as in a case file: unknown
// and duplicate keys, dates that are not calendar days, files that are not regular files
// or are too large.
#include "io/waiver_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "kc/case_io.h"

namespace kc {
namespace {

// A file of its own per call: ctest runs each test in a process of its own, side by side,
// so the name holds the process id (std::rand() starts alike in every process).
std::string written(const std::string& text) {
  static int n = 0;
  const std::string path =
      ::testing::TempDir() + "/waivers_" + std::to_string(getpid()) + "_" + std::to_string(++n) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& text) {
  const std::string path = written(text);
  const StatusOr<std::vector<Waiver>> w = load_waivers(path);
  std::remove(path.c_str());
  if (w.ok()) return "(read)";
  const std::string msg = w.status().message();
  return msg.substr(msg.find(".yaml") + 5);  // from ":LINE: ..." on
}

TEST(WaiverReader, ReadsEveryField) {
  const std::string path = written(
      "waivers:\n"
      "  - case: \"pool*\"\n    backend: onednn\n    check: argmax\n    diagnosis: NaN\n"
      "    reason: never selects NaN\n    expires: 2027-01-31\n    cpu: avx512_bf16\n"
      "    intermittent: true\n");  // with expires, as an intermittent waiver must be
  const StatusOr<std::vector<Waiver>> w = load_waivers(path);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASSERT_EQ(w->size(), 1u);
  EXPECT_EQ((*w)[0].case_glob, "pool*");
  EXPECT_EQ((*w)[0].check, "argmax");
  EXPECT_EQ((*w)[0].expires, "2027-01-31");
  EXPECT_EQ((*w)[0].cpu, "avx512_bf16");
  EXPECT_TRUE((*w)[0].intermittent);
  EXPECT_EQ((*w)[0].source, path + ":2");
  std::remove(path.c_str());
}

TEST(WaiverReader, AListOfChecksIsOneWaiverPerCheck) {
  const std::string path =
      written("waivers:\n  - {case: a, backend: b, check: [forward, argmax], diagnosis: NaN, reason: r}\n");
  const StatusOr<std::vector<Waiver>> w = load_waivers(path);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)[0].check, "forward");
  EXPECT_EQ((*w)[1].check, "argmax");
  EXPECT_EQ((*w)[1].diagnosis, "NaN");
  EXPECT_EQ((*w)[1].source, path + ":2");
  std::remove(path.c_str());
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: [forward, nope], reason: r}\n"),
            ":2: waivers[0].check[1]: no check is named \"nope\" (see kcheck checks)");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: [], reason: r}\n"),
            ":2: waivers[0].check: must name at least one check");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: [forward, forward], reason: r}\n"),
            ":2: waivers[0].check[1]: check forward is listed twice");
}

TEST(WaiverReader, EachMistakeIsNamed) {
  const std::string ok = "case: a, backend: b, check: forward, reason: r";
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + "}\n"), "(read)");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: forward}\n"),
            ":2: waivers[0].reason: missing (required)");
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + ", color: red}\n"),
            ":2: waivers[0].color: unknown key; allowed: case, backend, check, diagnosis, reason, expires, cpu, "
            "intermittent");
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + ", reasno: s}\n"),
            ":2: waivers[0].reasno: unknown key (did you mean reason?); allowed: case, backend, check, diagnosis, "
            "reason, expires, cpu, intermittent");
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + ", intermittent: true}\n"),
            ":2: waivers[0].intermittent: an intermittent waiver needs expires (a date)");
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + ", intermittent: sometimes}\n"),
            ":2: waivers[0].intermittent: expected true or false, got \"sometimes\"");
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + ", cpu: AVX-512}\n"),
            ":2: waivers[0].cpu: expected a CPU flag as /proc/cpuinfo names it (avx512_bf16), got \"AVX-512\"");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: nope, reason: r}\n"),
            ":2: waivers[0].check: no check is named \"nope\" (see kcheck checks)");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: forward, reason: \"\"}\n"),
            ":2: waivers[0].reason: must not be empty");
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + ", expires: 2027-02-30x}\n"),
            ":2: waivers[0].expires: expected a date YYYY-MM-DD, got \"2027-02-30x\"");
  EXPECT_EQ(error_of("waivers:\n  - 3\n"),
            ":2: waivers[0]: expected a waiver (a map with case, backend, check, reason), got \"3\"");
  EXPECT_EQ(error_of("waivers: 3\n"), ":1: waivers: expected a list of waivers, got \"3\"");
  EXPECT_EQ(error_of("op: conv\n"), ":1: op: unknown key; allowed: waivers");
  EXPECT_EQ(error_of(""), ":1: empty file: expected waivers: [...]");
  EXPECT_EQ(error_of("waivers: []\n---\nwaivers: []\n"),
            ":3: the file holds 2 YAML documents; put every waiver under one waivers: list");
  EXPECT_EQ(error_of("waivers: [\n"), ":2: invalid YAML at column 1: end of sequence flow not found");
  EXPECT_NE(load_waivers("/nonexistent/w.yaml").status().message().find("/nonexistent/w.yaml: no such file"),
            std::string::npos);
}

// A key given twice would keep one value without a word: refused, as in a case file.
TEST(WaiverReader, DuplicateKeysAreRefused) {
  EXPECT_EQ(error_of("waivers:\n  - case: a\n    backend: b\n    case: c\n    check: forward\n    reason: r\n"),
            ":4: waivers[0].case: duplicate key");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: forward, reason: r, reason: s}\n"),
            ":2: waivers[0].reason: duplicate key");
  EXPECT_EQ(error_of("waivers: []\nwaivers:\n  - {case: a, backend: b, check: forward, reason: r}\n"),
            ":2: waivers: duplicate key");
}

// `expires` is a day of the Gregorian calendar: the leap years are those divisible by 4,
// except centuries not divisible by 400.
TEST(WaiverReader, ExpiryDatesAreCalendarDays) {
  const std::string entry = "waivers:\n  - {case: a, backend: b, check: forward, reason: r, expires: ";
  for (const char* day : {"2027-01-31", "2028-02-29", "2000-02-29", "2027-04-30", "2027-12-31", "1999-02-28"}) {
    EXPECT_EQ(error_of(entry + day + "}\n"), "(read)") << day;
  }
  EXPECT_EQ(error_of(entry + "2027-02-30}\n"),
            ":2: waivers[0].expires: 2027-02-30 is not a date: February 2027 has 28 days");
  EXPECT_EQ(error_of(entry + "2027-02-29}\n"),
            ":2: waivers[0].expires: 2027-02-29 is not a date: February 2027 has 28 days");
  EXPECT_EQ(error_of(entry + "2100-02-29}\n"),
            ":2: waivers[0].expires: 2100-02-29 is not a date: February 2100 has 28 days");
  EXPECT_EQ(error_of(entry + "2027-04-31}\n"),
            ":2: waivers[0].expires: 2027-04-31 is not a date: April 2027 has 30 days");
  EXPECT_EQ(error_of(entry + "2027-13-01}\n"),
            ":2: waivers[0].expires: 2027-13-01 is not a date: there is no month 13");
  EXPECT_EQ(error_of(entry + "2027-00-10}\n"),
            ":2: waivers[0].expires: 2027-00-10 is not a date: there is no month 00");
  EXPECT_EQ(error_of(entry + "2027-01-00}\n"), ":2: waivers[0].expires: 2027-01-00 is not a date: there is no day 00");
  EXPECT_EQ(error_of(entry + "2027-1-10}\n"), ":2: waivers[0].expires: expected a date YYYY-MM-DD, got \"2027-1-10\"");
}

// Only a regular file is read: a folder, a FIFO (never opened: reading one would wait for
// a writer), a device, or a link to one of them, is refused naming the file and why; so
// is a file over the size limit, unread.
TEST(WaiverReader, OnlyARegularFileWithinTheLimitIsRead) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("waiver_files_" + std::to_string(getpid()));
  fs::create_directories(dir / "folder");
  ASSERT_EQ(::mkfifo((dir / "fifo.yaml").c_str(), 0600), 0);
  fs::create_symlink(dir / "folder", dir / "to_folder.yaml");
  fs::create_symlink(dir / "fifo.yaml", dir / "to_fifo.yaml");
  auto message = [](const fs::path& p) { return load_waivers(p.string()).status().message(); };
  ::alarm(20);  // a FIFO opened for reading would wait for ever: fail instead
  EXPECT_EQ(message(dir / "folder"), (dir / "folder").string() + ": is a directory, not a waiver file");
  EXPECT_EQ(message(dir / "to_folder.yaml"), (dir / "to_folder.yaml").string() +
                                                 ": is a directory, not a waiver file (a symbolic link to '" +
                                                 (dir / "folder").string() + "')");
  EXPECT_EQ(message(dir / "fifo.yaml"), (dir / "fifo.yaml").string() + ": is not a regular file: a FIFO");
  EXPECT_NE(message(dir / "to_fifo.yaml").find(": is not a regular file: a FIFO (a symbolic link to"),
            std::string::npos);
  EXPECT_EQ(message("/dev/null"), "/dev/null: is not a regular file: a character device");
  ::alarm(0);
  std::ofstream(dir / "big.yaml") << "waivers: []\n#" << std::string(static_cast<size_t>(kMaxCaseFileBytes), 'x');
  const Status big = load_waivers((dir / "big.yaml").string()).status();
  EXPECT_EQ(big.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(big.message().find(" bytes, over the waiver file limit of 4 MiB"), std::string::npos) << big.message();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kc
