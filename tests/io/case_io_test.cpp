// Case files: every padding form, defaults merging, `cases:` lists, inline data rules,
// NaN/inf, the writers and the file-system entry points (the errors: case_errors_test.cpp).
#include "kc/case_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "case_io_support.h"

namespace kc {
namespace {

using namespace io_test;

TEST(CaseIo, ReadsAMinimalCaseWithDefaults) {
  const Case c = load_ok(kConv1d);
  const auto& p = std::get<ConvParams>(c.op);
  EXPECT_EQ(c.dtype, DType::kF32);
  EXPECT_EQ(c.input.spatial, Dims({8}));
  EXPECT_EQ(p.kernel, Dims({3}));
  EXPECT_TRUE(p.stride.empty());
  EXPECT_EQ(p.groups, 1);
  EXPECT_FALSE(p.bias);
  EXPECT_EQ(c.tolerance.kind, ToleranceKind::kBound);
  EXPECT_TRUE(c.expect.pass);
  EXPECT_EQ(c.source, "t.yaml:1");
}

TEST(CaseIo, ReadsTheDesignExample) {
  const Case c = load_ok(
      "name: conv2d same padding, even kernel, stride 2   # optional\n"
      "op: conv\ndtype: f16\n"
      "input: {batch: 2, channels: 3, spatial: [17, 9]}\n"
      "conv: {out_channels: 4, kernel: [4, 3], stride: [2, 1], dilation: [1, 1], groups: 1,\n"
      "       padding: same, padding_mode: reflect, bias: true}\n"
      "data: {seed: 18446744073709551615, fill: ties}\n"
      "checks: [forward, backward, gradcheck]\n"
      "tolerance: {rtol: 1e-5, atol: 1e-7}\n"
      "deterministic: true\n");
  const auto& p = std::get<ConvParams>(c.op);
  EXPECT_EQ(c.name, "conv2d same padding, even kernel, stride 2");
  EXPECT_EQ(c.dtype, DType::kF16);
  EXPECT_EQ(p.padding.kind, PadKind::kSame);
  EXPECT_EQ(p.padding_mode, PaddingMode::kReflect);
  EXPECT_TRUE(p.bias);
  EXPECT_EQ(c.data.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(c.data.fill, Fill::kTies);
  EXPECT_EQ(c.checks, (std::vector<std::string>{"forward", "backward", "gradcheck"}));
  EXPECT_EQ(c.tolerance, (Tolerance{ToleranceKind::kExplicit, 1e-5, 1e-7}));
  EXPECT_TRUE(c.deterministic);
}

TEST(CaseIo, ReadsEveryPaddingForm) {
  const std::string head =
      "op: conv\ninput: {channels: 1, spatial: [9, 9]}\nconv: {out_channels: 1, kernel: 3, padding: ";
  auto pad = [&](const std::string& form) { return conv_padding(load_ok(head + form + "}\n")); };
  using Pairs = std::vector<std::array<int64_t, 2>>;
  EXPECT_EQ(pad("same"), (PadSpec{PadKind::kSame, {}}));
  EXPECT_EQ(pad("same_lower"), (PadSpec{PadKind::kSameLower, {}}));
  EXPECT_EQ(pad("valid"), (PadSpec{PadKind::kValid, {}}));
  EXPECT_EQ(pad("1").pairs, (Pairs{{1, 1}, {1, 1}}));
  EXPECT_EQ(pad("[1, 0]").pairs, (Pairs{{1, 1}, {0, 0}}));
  EXPECT_EQ(pad("[[0, 1], [1, 2]]").pairs, (Pairs{{0, 1}, {1, 2}}));
  EXPECT_EQ(pad("[[0, 1], 2]").pairs, (Pairs{{0, 1}, {2, 2}}));
  EXPECT_EQ(conv_padding(load_ok(kConv1d)), PadSpec{});
  const Case c = load_ok(head + "1, stride: 2, dilation: [1, 2]}\n");
  EXPECT_EQ(std::get<ConvParams>(c.op).kernel, Dims({3, 3}));
  EXPECT_EQ(std::get<ConvParams>(c.op).stride, Dims({2, 2}));
  EXPECT_EQ(std::get<ConvParams>(c.op).dilation, Dims({1, 2}));
  const Case pool = load_ok(
      "op: maxpool\ninput: {spatial: [6, 6]}\n"
      "maxpool: {kernel: [3, 3], stride: [2, 2], padding: [[1, 1], [0, 1]], ceil_mode: true, mode: inference, tie: "
      "last}\n");
  const auto& mp = std::get<MaxPoolParams>(pool.op);
  EXPECT_EQ(mp.padding.pairs, (Pairs{{1, 1}, {0, 1}}));
  EXPECT_TRUE(mp.ceil_mode);
  EXPECT_EQ(mp.mode, PoolMode::kInference);
  EXPECT_EQ(mp.tie, TieRule::kLast);
}

TEST(CaseIo, CasesListWithDefaultsDeepMerged) {
  const std::vector<LoadedCase> v = parse(
      "defaults:\n"                                                 // 1
      "  dtype: f64\n"                                              // 2
      "  input: {batch: 2, channels: 4, spatial: [8, 8]}\n"         // 3
      "  conv: {out_channels: 4, kernel: [3, 3], padding: same}\n"  // 4
      "  maxpool: {kernel: [2, 2]}\n"                               // 5
      "  checks: [forward, backward]\n"                             // 6
      "cases:\n"                                                    // 7
      "  - op: conv\n"                                              // 8
      "    conv: {groups: 2, kernel: [1, 1]}\n"                     // 9
      "  - op: maxpool\n"                                           // 10
      "    input: {spatial: [5, 5]}\n"                              // 11
      "    checks: [argmax]\n"                                      // 12
      "  - {op: conv_bias_relu, dtype: bf16, name: third}\n");      // 13
  ASSERT_EQ(v.size(), 3u);
  for (const LoadedCase& e : v) ASSERT_TRUE(e.c.ok()) << e.c.status().to_string();
  EXPECT_EQ(v[0].line, 8);
  EXPECT_EQ(v[1].line, 10);
  EXPECT_EQ(v[2].line, 13);
  const Case& a = v[0].c.value();
  const auto& conv = std::get<ConvParams>(a.op);
  EXPECT_EQ(conv.groups, 2);             // the case's own key
  EXPECT_EQ(conv.kernel, Dims({1, 1}));  // the case's own key wins
  EXPECT_EQ(conv.out_channels, 4);       // merged from defaults
  EXPECT_EQ(conv.padding.kind, PadKind::kSame);
  EXPECT_EQ(a.dtype, DType::kF64);
  EXPECT_EQ(a.input.batch, 2);
  const Case& b = v[1].c.value();
  EXPECT_EQ(b.input, (InputSpec{2, 4, {5, 5}}));  // nested map merged, list replaced
  EXPECT_EQ(b.checks, std::vector<std::string>{"argmax"});
  EXPECT_EQ(std::get<MaxPoolParams>(b.op).kernel, Dims({2, 2}));
  const Case& c = v[2].c.value();
  EXPECT_EQ(c.name, "third");
  EXPECT_EQ(c.dtype, DType::kBF16);
  EXPECT_TRUE(std::get<ConvBiasReluParams>(c.op).conv.bias);
  EXPECT_EQ(c.source, "t.yaml:13");
}

TEST(CaseIo, InlineTensors) {
  const std::string head =
      "op: conv\ndtype: f16\ninput: {channels: 1, spatial: [3]}\nconv: {out_channels: 1, kernel: [2], bias: true}\n";
  const Case c = load_ok(head +
                         "tensors:\n  x: {shape: [1, 1, 3], data: [0.1, -2, 3e0]}\n  b: {shape: [1], data: [65519]}\n"
                         "expected:\n  y: {shape: [1, 1, 2], data: [0.1, .nan]}\n");
  const Tensor& x = c.tensors.at("x");
  EXPECT_EQ(x.dtype, DType::kF16);
  EXPECT_EQ(x.data[0], round_to(DType::kF16, 0.1));  // rounded to the case dtype
  EXPECT_NE(x.data[0], 0.1);
  EXPECT_EQ(x.data[2], 3.0);
  EXPECT_EQ(c.tensors.at("b").data[0], 65504.0);
  const Tensor& y = c.expected.at("y");
  EXPECT_EQ(y.dtype, DType::kF64);  // golden values are kept as written
  EXPECT_EQ(y.data[0], 0.1);
  EXPECT_TRUE(std::isnan(y.data[1]));

  EXPECT_NE(load_error(head + "tensors:\n  x: {shape: [1, 1, 3], data: [1, 2]}\n")
                .find("t.yaml:6: tensors.x.data: has 2 values but shape [1, 1, 3] needs 3"),
            std::string::npos);
  EXPECT_NE(load_error(head + "tensors:\n  x: {shape: [1, -1, 3], data: []}\n")
                .find("tensors.x.shape: extent -1 is negative"),
            std::string::npos);
  EXPECT_NE(load_error(head + "tensors:\n  x:\n    shape: [1, 1, 3]\n    data: [1,\n      two, 3]\n")
                .find("t.yaml:9: tensors.x.data[1]: expected a number, got \"two\""),
            std::string::npos);
  // A nested list (rows of a 2-D tensor) is named as such, not by the count it throws off.
  EXPECT_NE(load_error(head + "tensors:\n  x: {shape: [1, 1, 3], data: [[1, 2], [3]]}\n")
                .find("t.yaml:6: tensors.x.data[0]: expected a number, got a list (data is one flat list"),
            std::string::npos)
      << load_error(head + "tensors:\n  x: {shape: [1, 1, 3], data: [[1, 2], [3]]}\n");
  EXPECT_NE(load_error(head + "tensors:\n  x: {shape: [1, 1, 3], data: [1, 1e400, 3]}\n")
                .find("tensors.x.data[1]: 1e400 is outside the range of a double"),
            std::string::npos);
  EXPECT_NE(load_error(head + "tensors:\n  z: {shape: [1], data: [1]}\n").find("tensors.z: unknown key"),
            std::string::npos);
  EXPECT_NE(load_error(head + "tensors:\n  x: {shape: [1, 1, 4], data: [1, 2, 3, 4]}\n")
                .find("t.yaml:6: tensors.x: shape [1, 1, 4] does not match"),
            std::string::npos);
  EXPECT_NE(load_error(head + "tensors:\n  dy: {shape: [1, 1, 2], data: [1, 2]}\n  x: {shape: [1], data: 1}\n")
                .find("t.yaml:7: tensors.x.data: expected a list of numbers"),
            std::string::npos);
}

TEST(CaseIo, MaxPoolIndicesAreIntegers) {
  const std::string head =
      "op: maxpool\ndtype: bf16\ninput: {spatial: [4]}\nmaxpool: {kernel: [2]}\nexpected:\n  indices: {shape: [1, 1, "
      "2], data: ";
  const Case c = load_ok(head + "[1, 3]}\n");
  EXPECT_EQ(c.expected.at("indices").data, (std::vector<double>{1, 3}));
  EXPECT_EQ(c.expected.at("indices").dtype, DType::kF64);
  EXPECT_NE(load_error(head + "[1, 2.5]}\n").find("expected.indices.data[1]: expected an index"), std::string::npos);
  EXPECT_NE(load_error(head + "[-1, 2]}\n").find("expected.indices.data[0]: expected an index"), std::string::npos);
  EXPECT_NE(case_to_one_line(c).find("indices: {shape: [1, 1, 2], data: [1, 3]}"), std::string::npos);
}

TEST(CaseIo, NanAndInfinitySpellingsRoundTrip) {
  const Case c = load_ok(
      "op: conv\ndtype: f32\ninput: {spatial: [9]}\nconv: {out_channels: 1, kernel: [1]}\n"
      "tensors:\n  x: {shape: [1, 1, 9], data: [.nan, .NaN, nan, .inf, -.inf, +.inf, .INF, inf, -0.0]}\n");
  const kc::HostVector<double>& d = c.tensors.at("x").data;
  const double inf = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(d[static_cast<size_t>(i)]));
  EXPECT_EQ(std::vector<double>(d.begin() + 3, d.end() - 1), (std::vector<double>{inf, -inf, inf, inf, inf}));
  EXPECT_TRUE(std::signbit(d[8]));
  const std::string yaml = case_to_yaml(c);
  EXPECT_NE(yaml.find("data: [.nan, .nan, .nan, .inf, -.inf, .inf, .inf, .inf, -0]"), std::string::npos) << yaml;
  EXPECT_EQ(load_ok(yaml), c);
  EXPECT_EQ(load_ok(case_to_one_line(c)), c);
}

TEST(CaseIo, WritersRoundTripAndOneLineIsOneLine) {
  Case c = load_ok(
      "name: \"quote \\\" backslash \\\\ colon: # hash\\n newline \\x01\"\nop: conv\ndtype: f64\n"
      "input: {batch: 2, channels: 4, spatial: [5, 6]}\n"
      "conv: {out_channels: 2, kernel: [2, 3], stride: [2, 1], groups: 2, padding: [[0, 1], 1], padding_mode: "
      "circular}\n"
      "data: {seed: 7, fill: integer}\nchecks: [determinism, shape]\ntolerance: {rtol: 0.1, atol: 5e-324}\n"
      "expect: {error: \"it's: {odd}\"}\n");
  const std::string line = case_to_one_line(c);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.front(), '{');
  EXPECT_NE(line.find("padding: [[0, 1], [1, 1]]"), std::string::npos) << line;
  EXPECT_NE(line.find("tolerance: {rtol: 0.1, atol: 5e-324}"), std::string::npos) << line;
  EXPECT_EQ(load_ok(line), c);
  const std::string yaml = case_to_yaml(c);
  EXPECT_NE(yaml.find("\nconv: {out_channels: 2"), std::string::npos) << yaml;
  EXPECT_EQ(load_ok(yaml), c);
  // accumulation: read, written, and part of equality.
  c = load_ok(std::string(kConv1d) + "dtype: f16\naccumulation: f16\n");
  EXPECT_EQ(c.accumulation, DType::kF16);
  EXPECT_EQ(accumulation_of(c), DType::kF16);
  EXPECT_NE(case_to_one_line(c).find("accumulation: f16"), std::string::npos) << case_to_one_line(c);
  EXPECT_EQ(load_ok(case_to_one_line(c)), c);
  Case other = c;
  other.accumulation.reset();
  EXPECT_FALSE(other == c);
  EXPECT_EQ(accumulation_of(other), DType::kF32);
  // Long data is wrapped in the block file and still reads back.
  c = load_ok(kConv1d);
  Tensor x = Tensor::zeros(DType::kF32, {1, 2, 8});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = round_to(DType::kF32, 1.0 / static_cast<double>(i + 3));
  c.tensors["x"] = x;
  const std::string wrapped = case_to_yaml(c);
  EXPECT_GT(std::count(wrapped.begin(), wrapped.end(), '\n'), 10);
  EXPECT_EQ(load_ok(wrapped), c);
}

TEST(CaseIo, Files) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
                       ("kc_case_io_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(dir / "b.yaml", kConv1d);
  write(dir / "sub" / "a.yml",
        std::string("cases:\n  - ") + "{op: conv, input: {spatial: [4]}, conv: {out_channels: 1, kernel: 2}}\n");
  write(dir / "notes.txt", "not a case");
  write(dir / "empty.yaml", "");
  write(dir / "sub" / "C.YAML", kConv1d);  // extensions in any case: none is skipped silently
  write(dir / "sub" / "d.Yml", kConv1d);
  const std::vector<std::string> files = find_case_files(dir.string()).files;
  EXPECT_EQ(files, (std::vector<std::string>{(dir / "b.yaml").string(), (dir / "empty.yaml").string(),
                                             (dir / "sub" / "C.YAML").string(), (dir / "sub" / "a.yml").string(),
                                             (dir / "sub" / "d.Yml").string()}));
  EXPECT_EQ(find_case_files((dir / "notes.txt").string()).files,
            std::vector<std::string>{(dir / "notes.txt").string()});
  EXPECT_EQ(find_case_files((dir / "nope").string()).files, std::vector<std::string>{(dir / "nope").string()});

  // A device (reading /dev/zero never ends) and a symlink loop are refused, with the reason.
  fs::create_symlink("/dev/zero", dir / "zero.yaml");
  fs::create_symlink(dir / "loop_b.yaml", dir / "loop_a.yaml");
  fs::create_symlink(dir / "loop_a.yaml", dir / "loop_b.yaml");
  const std::vector<LoadedCase> zero = load_case_file((dir / "zero.yaml").string());
  ASSERT_EQ(zero.size(), 1u);
  EXPECT_NE(zero[0].c.status().message().find("is not a regular file"), std::string::npos)
      << zero[0].c.status().message();
  const std::vector<LoadedCase> loop = load_case_file((dir / "loop_a.yaml").string());
  ASSERT_EQ(loop.size(), 1u);
  EXPECT_EQ(loop[0].c.status().message().find("no such file"), std::string::npos) << loop[0].c.status().message();
  fs::remove(dir / "zero.yaml");
  fs::remove(dir / "loop_a.yaml");
  fs::remove(dir / "loop_b.yaml");

  const std::vector<LoadedCase> b = load_case_file((dir / "b.yaml").string());
  ASSERT_EQ(b.size(), 1u);
  ASSERT_TRUE(b[0].c.ok());
  EXPECT_EQ(b[0].c->source, (dir / "b.yaml").string() + ":1");
  EXPECT_EQ(load_case_file((dir / "sub" / "a.yml").string()).size(), 1u);
  const std::vector<LoadedCase> empty = load_case_file((dir / "empty.yaml").string());
  EXPECT_NE(empty.at(0).c.status().message().find("empty.yaml:1: empty file"), std::string::npos);
  const std::vector<LoadedCase> missing = load_case_file((dir / "nope.yaml").string());
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].c.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing[0].line, 0);
  EXPECT_EQ(load_case_file(dir.string()).at(0).c.status().code(), StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

}  // namespace
// Reading costs are capped before they are paid: a file over kMaxCaseFileBytes is not
// read, and aliases that copy a large inline tensor again and again stop at
// kMaxFileInlineValues (the cases past it are refused unread, with the reason).
TEST(CaseIo, OversizedFilesAndAliasCopiesAreRefused) {
  namespace fs = std::filesystem;
  const fs::path big =
      fs::temp_directory_path() /
      ("kc_case_io_big_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".yaml");
  {
    std::ofstream out(big);
    out << "# " << std::string(static_cast<size_t>(kMaxCaseFileBytes), 'x') << "\n";
  }
  const std::vector<LoadedCase> refused = load_case_file(big.string());
  fs::remove(big);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].c.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused[0].c.status().message().find("over the case file limit of 4 MiB"), std::string::npos)
      << refused[0].c.status().message();

  const int64_t n = 1 << 18;  // values in the aliased case
  std::string text = "cases:\n  - &c\n    op: conv\n    input: {batch: 1, channels: 1, spatial: [" + std::to_string(n) +
                     "]}\n    conv: {out_channels: 1, kernel: 1}\n    tensors:\n      x: {shape: [1, 1, " +
                     std::to_string(n) + "], data: [";
  for (int64_t i = 0; i < n; ++i) text += i ? ",1" : "1";
  text += "]}\n";
  const int64_t fit = kMaxFileInlineValues / n;  // cases that fit, the anchored one included
  for (int64_t i = 0; i < fit + 2; ++i) text += "  - *c\n";
  const std::vector<LoadedCase> cases = parse_cases(text, "aliases.yaml");
  ASSERT_EQ(cases.size(), static_cast<size_t>(fit + 3));
  for (int64_t i = 0; i < fit; ++i) EXPECT_TRUE(cases[static_cast<size_t>(i)].c.ok()) << i;
  for (size_t i = static_cast<size_t>(fit + 1); i < cases.size(); ++i) {
    ASSERT_FALSE(cases[i].c.ok()) << i;
    EXPECT_EQ(cases[i].c.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(cases[i].c.status().message().find("inline tensors hold more than 8388608 values"), std::string::npos);
  }
}

}  // namespace kc
