// `data: zero:` in case files: every form of a region reads into DataSpec, writes back
// through both writers unchanged, merges from `defaults:` as lists do (a case's own
// list replaces it), and every bad region is refused naming the file, line and field.
#include <gtest/gtest.h>

#include <string>

#include "case_io_support.h"

namespace kc {
namespace {

using namespace io_test;

const std::string kConv2d =
    "op: conv\n"
    "input: {batch: 2, channels: 3, spatial: [16, 16]}\n"
    "conv: {out_channels: 4, kernel: [3, 3], padding: same}\n";

TEST(ZeroRegions, EveryFormReads) {
  const Case c = load_ok(kConv2d +
                         "data:\n"
                         "  seed: 5\n"
                         "  zero:\n"
                         "    - {tensor: x, sample: 1}\n"
                         "    - {tensor: dy, sample: 0, channel: 2}\n"
                         "    - {tensor: x, channel: 0}\n"
                         "    - {tensor: dy, box: [[0, 8], [8, 16]]}\n"
                         "    - {tensor: w, sample: 3, channel: 1, box: [[0, 1], [2, 3]]}\n");
  const std::vector<ZeroRegion> want = {
      {ZeroTensor::kX, 1, std::nullopt, {}},    {ZeroTensor::kDy, 0, 2, {}},
      {ZeroTensor::kX, std::nullopt, 0, {}},    {ZeroTensor::kDy, std::nullopt, std::nullopt, {{0, 8}, {8, 16}}},
      {ZeroTensor::kW, 3, 1, {{0, 1}, {2, 3}}},
  };
  EXPECT_EQ(c.data.seed, 5u);
  EXPECT_EQ(c.data.zero, want);
}

TEST(ZeroRegions, BothWritersRoundTrip) {
  const Case c = load_ok(kConv2d +
                         "data: {seed: 9, fill: integer, zero: [{tensor: x, sample: 1}, {tensor: x, channel: 0},\n"
                         "       {tensor: dy, sample: 0, channel: 2, box: [[1, 2], [0, 16]]}, {tensor: w}]}\n");
  ASSERT_EQ(c.data.zero.size(), 4u);
  const std::string line = case_to_one_line(c);
  EXPECT_NE(line.find("zero: [{tensor: x, sample: 1}, {tensor: x, channel: 0}, "
                      "{tensor: dy, sample: 0, channel: 2, box: [[1, 2], [0, 16]]}, {tensor: w}]"),
            std::string::npos)
      << line;
  EXPECT_EQ(load_ok(line), c);
  EXPECT_EQ(load_ok(case_to_yaml(c)), c);
  Case plain = c;
  plain.data.zero.clear();
  EXPECT_EQ(case_to_one_line(plain).find("zero:"), std::string::npos);  // left out when there is none
}

TEST(ZeroRegions, DefaultsGiveTheListAndACaseReplacesIt) {
  const std::vector<LoadedCase> v = parse(
      "defaults:\n"
      "  op: conv\n"
      "  input: {batch: 2, channels: 1, spatial: [8]}\n"
      "  conv: {out_channels: 1, kernel: [3]}\n"
      "  data: {seed: 1, zero: [{tensor: x, sample: 0}]}\n"
      "cases:\n"
      "  - {name: inherits}\n"
      "  - {name: own, data: {zero: [{tensor: dy, sample: 1}]}}\n");
  ASSERT_EQ(v.size(), 2u);
  ASSERT_TRUE(v[0].c.ok() && v[1].c.ok());
  EXPECT_EQ(v[0].c->data.zero, (std::vector<ZeroRegion>{{ZeroTensor::kX, 0, std::nullopt, {}}}));
  EXPECT_EQ(v[1].c->data.zero, (std::vector<ZeroRegion>{{ZeroTensor::kDy, 1, std::nullopt, {}}}));
  EXPECT_EQ(v[1].c->data.seed, 1u);  // the data map still merges key by key
}

TEST(ZeroRegions, BadRegionsAreRefusedAtTheirLine) {
  const std::string d = kConv2d + "data:\n  zero:\n";
  const std::vector<ErrorCase> table = {
      {d + "    - {tensor: b}\n", {"t.yaml:6: data.zero[0].tensor: expected one of x, w, dy, got \"b\""}},
      {d + "    - {sample: 1}\n", {"t.yaml:6: data.zero[0].tensor: missing (required)"}},
      {d + "    - {tensor: x, sampel: 1}\n", {"t.yaml:6: data.zero[0].sampel: unknown key (did you mean sample?)"}},
      {d + "    - {tensor: x, sample: 2}\n", {"t.yaml:6: data.zero[0].sample: 2 is outside x's batch 0 to 1"}},
      {d + "    - {tensor: x}\n    - {tensor: dy, channel: 4}\n",
       {"t.yaml:7: data.zero[1].channel: 4 is outside dy's channels 0 to 3"}},
      {d + "    - {tensor: x, box: [[0, 8]]}\n",
       {"t.yaml:6: data.zero[0].box: has 1 entries but x has 2 spatial dims"}},
      {d + "    - {tensor: dy, box: [[0, 8], [8, 8]]}\n",
       {"t.yaml:6: data.zero[0].box[1]: lo 8 >= hi 8 (a box is half-open"}},
      {d + "    - {tensor: dy, box: [[0, 8], [8, 17]]}\n",
       {"t.yaml:6: data.zero[0].box[1]: [8, 17] is outside dy's output extent 16"}},
      {d + "    - {tensor: dy, box: [[0, 8], [1, 2, 3]]}\n",
       {"t.yaml:6: data.zero[0].box[1]: expected a [lo, hi] pair, got a list"}},
      {d + "    - {tensor: dy, box: []}\n", {"t.yaml:6: data.zero[0].box: an empty list"}},
      {d + "    - {tensor: x, sample: one}\n", {"t.yaml:6: data.zero[0].sample: expected an integer, got \"one\""}},
      {kConv2d + "data: {zero: {tensor: x}}\n", {"t.yaml:4: data.zero: expected a list of regions"}},
      {"op: maxpool\ninput: {spatial: [8]}\nmaxpool: {kernel: [2]}\ndata: {zero: [{tensor: w}]}\n",
       {"t.yaml:4: data.zero[0].tensor: op maxpool has no input w"}},
      {"op: stack\ninput: {spatial: [8]}\nstack: {depth: 2, layer: {conv: {out_channels: 1, kernel: [3]}}}\n"
       "data: {zero: [{tensor: x}]}\n",
       {"t.yaml:4: data.zero: not supported for op stack"}},
  };
  for (const ErrorCase& e : table) {
    const std::string m = load_error(e.yaml);
    for (const std::string& want : e.want) EXPECT_NE(m.find(want), std::string::npos) << m << "\nwanted: " << want;
  }
}

}  // namespace
}  // namespace kc
