// Case-file errors: every error class names the file, line and field; file-level errors
// are one entry; errors in defaults point into them; size refusals keep their codes; an
// expectation is read even from a refused case.
#include <gtest/gtest.h>

#include <string>

#include "case_io_support.h"

namespace kc {
namespace {

using namespace io_test;

TEST(CaseIo, EveryErrorNamesFileLineAndField) {
  const std::string in = "op: conv\ninput: {channels: 4, spatial: [8]}\n";
  const std::vector<ErrorCase> table = {
      {in + "conv:\n  out_channels: 4\n  kernel: [3]\n  groups: two\n",
       {"t.yaml:6: conv.groups: expected an integer, got \"two\""}},
      {in + "conv: {out_channels: 4, kernel: [3], groups: \"2\"}\n",
       {"t.yaml:3: conv.groups: expected an integer, got \"2\" (quoted: numbers and booleans are plain scalars"}},
      // A tag is named: `got "1"` alone reads as if 1 were no integer.
      {in + "conv: {out_channels: 4, kernel: [3], groups: !!float 1}\n",
       {"t.yaml:3: conv.groups: expected an integer, got \"1\" (tagged !!float: numbers"}},
      {in + "conv: {out_channels: 4, kernel: [3], groups: 2.5}\n",
       {"t.yaml:3: conv.groups: expected an integer, got \"2.5\""}},
      {in + "conv: {out_channels: 4, kernel: [3], groups: 99999999999999999999}\n",
       {"t.yaml:3: conv.groups:", "int64 range"}},
      {in + "conv: {out_channels: 4, kernel: [3], groupz: 2}\n",
       {"t.yaml:3: conv.groupz: unknown key", "did you mean groups?"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\nbogus: 1\n", {"t.yaml:4: bogus: unknown key"}},
      // Two edits of a two-letter key is no typo: no "did you mean op?".
      {in + "conv: {out_channels: 4, kernel: [3]}\na0: 1\n", {"t.yaml:4: a0: unknown key; allowed: name, op,"}},
      // A swap of two neighbours is one edit, even in a short key.
      {in + "conv: {out_channels: 4, kernel: [3], bais: true}\n",
       {"t.yaml:3: conv.bais: unknown key (did you mean bias?)"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\nnmae: x\n", {"t.yaml:4: nmae: unknown key (did you mean name?)"}},
      {in + "conv: {out_channels: 4, kernel: [3], bias: yes}\n", {"t.yaml:3: conv.bias: expected true or false"}},
      {in + "conv: {out_channels: 4, kernel: [3], padding: sane}\n",
       {"t.yaml:3: conv.padding: expected one of same, same_lower, valid"}},
      {in + "conv: {out_channels: 4, kernel: [3], padding: [[1, 2, 3]]}\n",
       {"t.yaml:3: conv.padding[0]: expected a number or a [lo, hi] pair"}},
      {in + "conv: {out_channels: 4, kernel: [x]}\n", {"t.yaml:3: conv.kernel[0]: expected an integer"}},
      {in + "conv: {out_channels: 4, kernel: [3], padding: []}\n", {"t.yaml:3: conv.padding: an empty list"}},
      {"op: conv\ndtype: f16\ninput: {spatial: [2]}\nconv: {out_channels: 1, kernel: [1]}\n"
       "tensors: {x: {shape: [1, 1, 2], data: [1, 70000]}}\n",
       {"t.yaml:5: tensors.x.data[1]: 70000 overflows f16"}},
      {"op: maxpool\ninput: {spatial: [2]}\nmaxpool: {kernel: [2], mode: inference}\n"
       "expected: {indices: {shape: [1, 1, 1], data: [1]}}\n",
       {"expected.indices: maxpool.mode inference keeps no indices"}},
      {in + "conv: {out_channels: 4}\n", {"t.yaml:3: conv.kernel: missing (required)"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\nmaxpool: {kernel: [2]}\n",
       {"t.yaml:4: maxpool: given, but op is conv"}},
      {"op: convv\n", {"t.yaml:1: op: expected one of conv, maxpool, avgpool, conv_bias_relu, stack, got \"convv\""}},
      {"name: x\n", {"t.yaml:1: op: missing (required)"}},
      {"op: conv\nconv: {out_channels: 1, kernel: [1]}\n", {"t.yaml:1: input: missing (required)"}},
      {"op: conv\ninput: {spatial: 8}\n", {"t.yaml:2: input.spatial: expected a list of extents"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\ndtype: f8\n",
       {"t.yaml:4: dtype: expected one of f64, f32, f16, bf16"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\naccumulation: f8\n",
       {"t.yaml:4: accumulation: expected one of f64, f32"}},
      {"op: stack\ndtype: bf16\naccumulation: bf16\ninput: {spatial: [16, 16]}\n"
       "stack: {depth: 2, layer: {conv: {out_channels: 1, kernel: [3, 3], padding: same}}}\n",
       {"t.yaml:5: stack layer 1: accumulation: bf16 sums of up to 256 terms"}},  // the stack: line
      {in + "conv: {out_channels: 4, kernel: [3]}\ndtype: bf16\naccumulation: f16\n",
       {"t.yaml:5: accumulation: f16 cannot accumulate dtype bf16 (an accumulator has at least the storage's "
        "precision and range; for bf16: bf16, f32 or f64)"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\ndtype: f32\naccumulation: f16\n",
       {"t.yaml:5: accumulation: f16 cannot accumulate dtype f32 (an accumulator has at least the storage's "
        "precision and range; for f32: f32 or f64)"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\ndata: {seed: -1}\n",
       {"t.yaml:4: data.seed: expected a non-negative integer"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\nchecks: [forward, fwd]\n",
       {"t.yaml:4: checks[1]: expected one of shape, forward"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\nchecks: [forward, forward]\n",
       {"t.yaml:4: checks[1]: check forward is listed twice"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\ntolerance: {rtol: -1}\n",
       {"t.yaml:4: tolerance.rtol: must be a finite number >= 0"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\ntolerance: loose\n",
       {"t.yaml:4: tolerance: expected one of bound, exact"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\nexpect: fail\n", {"t.yaml:4: expect: expected pass or {error"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\nexpect: {error: \"\"}\n",
       {"t.yaml:4: expect.error: must not be empty"}},
      // Whitespace is in almost every message: as good as empty.
      {in + "conv: {out_channels: 4, kernel: [3]}\nexpect: {error: \" \\t\"}\n",
       {"t.yaml:4: expect.error: must not be only whitespace (it would match almost any error)"}},
      {in + "conv: {out_channels: 4, kernel: [3]}\nop: maxpool\n", {"t.yaml:4: op: duplicate key"}},
      {"op: conv_bias_relu\ninput: {spatial: [8]}\nconv: {out_channels: 1, kernel: [3], bias: false}\n",
       {"t.yaml:3: conv.bias: conv_bias_relu always has a bias"}},
      // validate() errors are located at the field they name.
      {in + "conv:\n  out_channels: 4\n  kernel: [3]\n  groups: 3\n",
       {"t.yaml:6: conv.groups: 3 does not divide input.channels 4"}},
      {in + "conv:\n  out_channels: 4\n  kernel: [3]\n  padding: [1, 1]\n", {"t.yaml:6: conv.padding: has 2 entries"}},
      {"op: conv\ninput: {channels: 4,\n  spatial: [8, 0]}\nconv: {out_channels: 4, kernel: 3}\n",
       {"t.yaml:3: input.spatial[1]: 0 must be at least 1"}},
      {"op: conv_bias_relu\ninput: {channels: 4, spatial: [8]}\n\nconv: {out_channels: 6, kernel: [3], groups: 4}\n",
       {"t.yaml:4: conv_bias_relu.groups: 4 does not divide"}},
  };
  for (const ErrorCase& t : table) {
    const std::string m = load_error(t.yaml);
    for (const std::string& w : t.want)
      EXPECT_NE(m.find(w), std::string::npos) << "message: " << m << "\nwanted: " << w;
  }
}

TEST(CaseIo, FileLevelErrorsAreOneEntry) {
  const std::vector<ErrorCase> table = {
      {"", {"t.yaml:1: empty file"}},
      {"# only a comment\n", {"t.yaml:1: empty file"}},
      {"op: conv\ninput: [1, 2\n", {"t.yaml:", "invalid YAML"}},
      {"a: b: c\n", {"t.yaml:1", "invalid YAML"}},
      {std::string("\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\xff\xfe", 12), {"t.yaml:1"}},
      {"- op: conv\n", {"t.yaml:1: expected a case (a map of case fields) or cases: [...], got a list"}},
      {"just text\n", {"t.yaml:1: expected a case", "got \"just text\""}},
      {"op: conv\n---\nop: maxpool\n", {"t.yaml:3: the file holds 2 YAML documents; put several cases under cases:"}},
      {"a: 1\n---\nb: 2\n---\nc: 3\n---\n", {"t.yaml:3: the file holds 3 or more YAML documents"}},
      {",", {"t.yaml:1: invalid YAML at column 1: unexpected \",\""}},
      // A NUL is named where it is, not as the escape the parser makes of it further on.
      {std::string("name: nul\nop: conv\n\0dtype: f32\n", 31),
       {"t.yaml:3: invalid YAML at column 1: a control byte 0x00 (NUL), which YAML does not allow"}},
      {"op: conv\nname: \"a\x01"
       "b\"\n",
       {"t.yaml:2: invalid YAML at column 9: a control byte 0x01"}},
      {"- a\n,\n", {"t.yaml:2: invalid YAML at column 1: unexpected \",\""}},
      {"cases: []\n", {"t.yaml:1: cases: expected a non-empty list of cases"}},
      {"cases:\n  - {op: conv}\nop: conv\n", {"t.yaml:3: op: unknown key; allowed: cases, defaults"}},
      {"defaults: [1]\ncases:\n  - {op: conv}\n", {"t.yaml:1: defaults: expected a map of case fields, got a list"}},
      // yaml-cpp says only "bad file" past its depth limit.
      {"op: conv\nname: " + std::string(600, '[') + std::string(600, ']') + "\n",
       {"t.yaml:2: invalid YAML", "nesting too deep: lists and maps reach 500 levels, the parser's limit"}},
  };
  for (const ErrorCase& t : table) {
    const std::string m = load_error(t.yaml);
    for (const std::string& w : t.want)
      EXPECT_NE(m.find(w), std::string::npos) << "message: " << m << "\nwanted: " << w;
  }
  const std::vector<LoadedCase> v = parse("cases:\n  - 3\n  - op: conv\n");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NE(v[0].c.status().message().find("t.yaml:2: cases[0]: expected a case"), std::string::npos);
  EXPECT_NE(v[1].c.status().message().find("t.yaml:3: input: missing"), std::string::npos);
}

TEST(CaseIo, ErrorsInDefaultsPointIntoDefaults) {
  const std::vector<LoadedCase> v = parse(
      "defaults:\n  conv: {out_channels: 4, kernel: [3], padding: [[0, 1], [0, 1]]}\n"
      "cases:\n  - {op: conv, input: {channels: 4, spatial: [8]}}\n");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].c.status().message().find("t.yaml:2: conv.padding: has 2 entries"), std::string::npos)
      << v[0].c.status().message();
}

TEST(CaseIo, OversizedCaseKeepsItsStatusCode) {
  const std::vector<LoadedCase> v = parse(
      "op: conv\ninput: {batch: 100000, channels: 1000, spatial: [1000, 1000]}\n"
      "conv: {out_channels: 1000, kernel: [3, 3]}\n");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].c.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(v[0].c.status().message().find("t.yaml:2: input: the case needs about"), std::string::npos)
      << v[0].c.status().message();
}

// The memory refusal starts with the field that makes the case large, so it is located
// at that field's line (it was always input's).
TEST(CaseIo, MemoryRefusalIsLocatedAtTheFieldThatCausesIt) {
  const std::vector<LoadedCase> v = parse(
      "op: conv\ninput: {batch: 1, channels: 1, spatial: [8, 8]}\n"
      "conv:\n  out_channels: 1\n  kernel: 3\n  padding: same\n  dilation: 2147483647\n");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].c.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(v[0].c.status().message().find("t.yaml:7: conv.dilation: the case needs"), std::string::npos)
      << v[0].c.status().message();
}

TEST(CaseIo, ExpectationIsReadEvenWhenTheCaseIsRefused) {
  const std::vector<LoadedCase> v = parse(
      "op: conv\ninput: {channels: 4, spatial: [8]}\nconv: {out_channels: 4, kernel: [3], groups: 3}\n"
      "expect: {error: \"does not divide\"}\n");
  ASSERT_EQ(v.size(), 1u);
  ASSERT_FALSE(v[0].c.ok());
  EXPECT_FALSE(v[0].expect.pass);
  EXPECT_EQ(v[0].expect.error, "does not divide");
  EXPECT_NE(v[0].c.status().message().find(v[0].expect.error), std::string::npos);
  const std::vector<LoadedCase> w = parse("op: conv\nexpect: {error: \"missing\"}\n");
  EXPECT_EQ(w[0].expect.error, "missing");
  const std::vector<LoadedCase> typo =
      parse(std::string(kConv1d) + "chekcs: [forward]\nexpect: {error: \"did you mean checks\"}\n");
  EXPECT_EQ(typo[0].expect.error, "did you mean checks");
  EXPECT_NE(typo[0].c.status().message().find("t.yaml:4: chekcs: unknown key (did you mean checks?)"),
            std::string::npos)
      << typo[0].c.status().message();
  const Case ok = load_ok(std::string(kConv1d) + "expect: {error: something}\n");
  EXPECT_EQ(ok.expect, (Expectation{false, "something"}));
}

}  // namespace
}  // namespace kc
