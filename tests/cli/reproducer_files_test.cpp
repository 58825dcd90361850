// Failure reproducers (reproducer_files.cpp): names that fit the file system whatever the
// names hold, a first line that bash reads back to the exact arguments, and cases that
// load back alone with only the checks that apply to them.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "cli/cli.h"
#include "kc/case_io.h"
#include "kc/report.h"
#include "run/json_writer.h"

namespace kc::cli {
namespace {

namespace fs = std::filesystem;

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / (name + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

CaseResult failed(const std::string& case_name, const std::string& backend, const std::string& reproducer) {
  CaseResult r;
  r.case_name = case_name;
  r.source = "cases/x.yaml:3";
  r.backend = backend;
  r.disposition = Disposition::kFailed;
  r.reproducer = reproducer;
  r.checks.push_back(CheckResult{"forward", Disposition::kFailed, "y: 3 elements outside the tolerance"});
  return r;
}

const char* const kConv =
    "{op: conv, input: {batch: 1, channels: 1, spatial: [5]}, conv: {out_channels: 1, kernel: 3}}";

bool utf8_valid(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t code = 0;
    const size_t n = utf8_decode(s, i, code);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

TEST(ReproducerName, LongNamesAreCutAndStayUnique) {
  const std::string backend(309, 'b');
  const CaseResult r = failed(std::string(309, 'c'), backend, kConv);
  const std::string one = reproducer_name(1, r), two = reproducer_name(2, r);
  EXPECT_LE(one.size(), kMaxReproducerName);
  EXPECT_EQ(one.substr(0, 4), "001-");
  EXPECT_EQ(one.substr(one.size() - 13), ".forward.yaml");
  EXPECT_NE(one, two);
  EXPECT_LE(reproducer_name(2147483647, r).size(), kMaxReproducerName);
  // Not cut inside a UTF-8 character; no folder separator or control character.
  const std::string accents =
      reproducer_name(7, failed("conv", "trap./\n" + std::string(300, 'x') + "\xc3\xa9", kConv));
  EXPECT_TRUE(utf8_valid(accents)) << accents;
  EXPECT_EQ(accents.find_first_of("/\n"), std::string::npos) << accents;
  std::string e;
  for (int i = 0; i < 150; ++i) e += "\xc3\xa9";
  EXPECT_TRUE(utf8_valid(reproducer_name(3, failed("conv", e, kConv))));
}

// A 309-character backend and case name: every reproducer is written (the file system
// takes 255 bytes a name) and names its backend in full on its first line.
TEST(ReproducerFiles, LongBackendNameIsWritten) {
  const fs::path dir = fresh_folder("kc_long_backend");
  const std::string backend = "trap." + std::string(304, 'x');
  std::vector<CaseResult> results = {failed(std::string(309, 'c'), backend, kConv), failed("b", backend, kConv)};
  name_reproducers((dir / "failures").string(), results);
  ASSERT_TRUE(write_failures((dir / "failures").string(), results, {"/lib/kc_traps.so"}));
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir / "failures")) {
    ++files;
    EXPECT_NE(read_file(e.path()).find(" --backend '" + backend + "' --plugin '/lib/kc_traps.so'\n"),
              std::string::npos);
  }
  EXPECT_EQ(files, 2);
  fs::remove_all(dir);
}

// What bash makes of a reproducer's first line: its arguments after `kcheck`.
std::vector<std::string> rerun_arguments(const std::string& first_line) {
  const std::string prefix = "# rerun: kcheck ";
  if (first_line.rfind(prefix, 0) != 0) return {"<no rerun line>"};
  const std::string script = "printf '%s\\0' " + first_line.substr(prefix.size());
  FILE* p = popen(("bash -c " + shell_quote(script)).c_str(), "r");
  if (p == nullptr) return {"<popen failed>"};
  std::string out;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  std::vector<std::string> args;
  for (size_t start = 0, end; (end = out.find('\0', start)) != std::string::npos; start = end + 1) {
    args.push_back(out.substr(start, end - start));
  }
  return args;
}

TEST(ReproducerFiles, RerunLineQuotesEveryArgument) {
  const fs::path dir = fresh_folder("kc rerun 'quoted' $dir");
  const std::string backend = "my backend\n$(touch pwned) 'q' \\";
  const std::string plugin = "/opt/it's here/lib\rx.so";
  std::vector<CaseResult> results = {failed("conv", backend, kConv)};
  name_reproducers((dir / "failures").string(), results);
  ASSERT_TRUE(write_failures((dir / "failures").string(), results, {plugin, "/b.so"}));
  const std::string path = results[0].fields.back().second;
  const std::string text = read_file(path);
  const std::string first = text.substr(0, text.find('\n'));
  EXPECT_EQ(first.find('\r'), std::string::npos) << first;
  EXPECT_EQ(rerun_arguments(first),
            (std::vector<std::string>{"run", path, "--backend", backend, "--plugin", plugin, "--plugin", "/b.so"}));
  // The rest is comments and the case, which loads back alone.
  EXPECT_EQ(text.substr(text.find('\n') + 1, 22), "# kcheck reproducer: c");
  const std::vector<LoadedCase> back = load_case_file(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(back[0].c.ok()) << back[0].c.status().to_string();
  fs::remove_all(dir);
}

// Checks shared through `defaults:` are resolved for each case: a reproducer names only
// the checks that apply to its case, so that it loads back (a case that names argmax
// itself on a conv is refused).
TEST(ReproducerFiles, DefaultChecksAreResolvedForEachCase) {
  const std::string file =
      "defaults: {input: {batch: 1, channels: 1, spatial: [6]}, checks: [forward, argmax]}\n"
      "cases:\n"
      "  - {name: a conv, op: conv, conv: {out_channels: 1, kernel: 3}}\n"
      "  - {name: a pool, op: maxpool, maxpool: {kernel: 2}}\n";
  const std::vector<LoadedCase> loaded = parse_cases(file, "defaults.yaml");
  ASSERT_EQ(loaded.size(), 2u);
  std::vector<CaseResult> results;
  for (const LoadedCase& lc : loaded) {
    ASSERT_TRUE(lc.c.ok()) << lc.c.status().to_string();
    results.push_back(failed(lc.c->name, "trap.none", case_to_one_line(*lc.c)));
  }
  const fs::path dir = fresh_folder("kc_default_checks");
  name_reproducers((dir / "failures").string(), results);
  ASSERT_TRUE(write_failures((dir / "failures").string(), results, {}));
  const std::vector<std::vector<std::string>> want = {{"forward"}, {"forward", "argmax"}};
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string path = results[i].fields.back().second;
    const std::vector<LoadedCase> back = parse_cases(read_file(path), path);
    ASSERT_EQ(back.size(), 1u) << path;
    ASSERT_TRUE(back[0].c.ok()) << back[0].c.status().to_string();
    EXPECT_EQ(back[0].c->checks, want[i]) << path;
    EXPECT_EQ(*back[0].c, *loaded[i].c) << path;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kc::cli
