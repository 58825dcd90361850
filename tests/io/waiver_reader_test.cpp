// Waiver files: a valid file reads with each entry's file:line; each mistake is refused
// naming the file, line, entry, field and reason.
#include "io/waiver_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace kc {
namespace {

std::string written(const std::string& text) {
  const std::string path = ::testing::TempDir() + "/waivers_" + std::to_string(std::rand()) + ".yaml";
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
      "    reason: never selects NaN\n    expires: 2027-01-31\n");
  const StatusOr<std::vector<Waiver>> w = load_waivers(path);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASSERT_EQ(w->size(), 1u);
  EXPECT_EQ((*w)[0].case_glob, "pool*");
  EXPECT_EQ((*w)[0].check, "argmax");
  EXPECT_EQ((*w)[0].expires, "2027-01-31");
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
            ":2: waivers[0].check: no check is named 'nope' (see kcheck checks)");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: [], reason: r}\n"),
            ":2: waivers[0].check: must name at least one check");
}

TEST(WaiverReader, EachMistakeIsNamed) {
  const std::string ok = "case: a, backend: b, check: forward, reason: r";
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + "}\n"), "(read)");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: forward}\n"), ":2: waivers[0].reason: is missing");
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + ", color: red}\n"),
            ":2: waivers[0].color: unknown field (case, backend, check, diagnosis, reason, expires)");
  EXPECT_EQ(error_of("waivers:\n  - {case: a, backend: b, check: nope, reason: r}\n"),
            ":2: waivers[0].check: no check is named 'nope' (see kcheck checks)");
  EXPECT_EQ(error_of("waivers:\n  - {" + ok + ", expires: 2027-02-30x}\n"),
            ":2: waivers[0].expires: must be a date YYYY-MM-DD, got '2027-02-30x'");
  EXPECT_EQ(error_of("waivers: 3\n"), ": waivers: must be a list of waivers");
  EXPECT_EQ(error_of("waivers: [\n"), ":2: not YAML: end of sequence flow not found");
  EXPECT_NE(load_waivers("/nonexistent/w.yaml").status().message().find("cannot be read"), std::string::npos);
}

}  // namespace
}  // namespace kc
