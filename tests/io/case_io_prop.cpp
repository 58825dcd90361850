// Properties of case files: every valid generated Case survives case_to_yaml and
// case_to_one_line unchanged, and no input (random bytes, or a valid file mangled)
// crashes the reader or yields an unlocated error.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <ostream>

#include "core/check_table.h"
#include "core/validate.h"
#include "kc/case_io.h"
#include "kc/shape.h"

namespace kc {

// RapidCheck prints a failing Case as its one-line reproducer.
void showValue(const Case& c, std::ostream& os) { os << case_to_one_line(c); }

namespace {

namespace gen = rc::gen;

std::string gen_text() {
  // Characters that stress quoting: YAML indicators, escapes, controls, spaces.
  const std::string alphabet = "ab z09:#{}[],&*!|>'\"%@`\\-?\n\t\r\x01\x7f";
  return *gen::container<std::string>(gen::elementOf(alphabet));
}

Dims gen_dims_or_empty(size_t rank, int lo, int hi) {
  if (*gen::arbitrary<bool>()) return {};
  return *gen::container<Dims>(rank, gen::inRange<int64_t>(lo, hi + 1));
}

PadSpec gen_padding(size_t rank, int max_pad) {
  PadSpec p;
  switch (*gen::inRange(0, 5)) {
    case 0:
      return p;  // explicit, no pairs
    case 1:
      p.kind = PadKind::kValid;
      return p;
    case 2:
      p.kind = PadKind::kSame;
      return p;
    case 3:
      p.kind = PadKind::kSameLower;
      return p;
    default:
      for (size_t i = 0; i < rank; ++i) {
        p.pairs.push_back({*gen::inRange<int64_t>(0, max_pad + 1), *gen::inRange<int64_t>(0, max_pad + 1)});
      }
      return p;
  }
}

// Spatial extents at least as large as each window (so most cases are valid).
Dims gen_spatial(const Dims& kernel, const Dims& dilation) {
  Dims in;
  for (size_t i = 0; i < kernel.size(); ++i) {
    const int64_t d = dilation.empty() ? 1 : dilation[i];
    in.push_back(d * (kernel[i] - 1) + 1 + *gen::inRange<int64_t>(0, 4));
  }
  return in;
}

void gen_conv_op(Case* c, size_t rank, bool fused) {
  ConvParams p;
  const int64_t groups = *gen::inRange<int64_t>(1, 4);
  p.groups = groups;
  p.out_channels = groups * *gen::inRange<int64_t>(1, 3);
  c->input.channels = groups * *gen::inRange<int64_t>(1, 3);
  p.kernel = *gen::container<Dims>(rank, gen::inRange<int64_t>(1, 4));
  p.stride = gen_dims_or_empty(rank, 1, 2);
  p.dilation = gen_dims_or_empty(rank, 1, 2);
  p.padding = gen_padding(rank, 2);
  p.padding_mode =
      *gen::element(PaddingMode::kZeros, PaddingMode::kReflect, PaddingMode::kReplicate, PaddingMode::kCircular);
  p.bias = fused || *gen::arbitrary<bool>();
  c->input.spatial = gen_spatial(p.kernel, p.dilation);
  if (fused) {
    c->op = ConvBiasReluParams{p};
  } else {
    c->op = p;
  }
}

void gen_pool_op(Case* c, size_t rank) {
  MaxPoolParams p;
  c->input.channels = *gen::inRange<int64_t>(1, 4);
  p.kernel = *gen::container<Dims>(rank, gen::inRange<int64_t>(1, 4));
  p.stride = gen_dims_or_empty(rank, 1, 3);
  p.dilation = gen_dims_or_empty(rank, 1, 2);
  p.padding = gen_padding(rank, 1);
  p.ceil_mode = *gen::arbitrary<bool>();
  p.mode = *gen::element(PoolMode::kInference, PoolMode::kTraining);
  p.tie = *gen::element(TieRule::kFirst, TieRule::kLast, TieRule::kAny);
  c->input.spatial = gen_spatial(p.kernel, p.dilation);
  c->op = p;
}

void gen_options(Case* c) {
  if (*gen::arbitrary<bool>()) c->name = gen_text();
  c->dtype = *gen::element(DType::kF64, DType::kF32, DType::kF16, DType::kBF16);
  c->input.batch = *gen::inRange<int64_t>(1, 3);
  c->data.seed = *gen::arbitrary<uint64_t>();
  c->data.fill = *gen::element(Fill::kRandom, Fill::kNormal, Fill::kInteger, Fill::kTies, Fill::kSpecial);
  for (const char* check : {"shape", "forward", "backward", "gradcheck", "adjoint", "weight_share", "argmax", "padding",
                            "determinism", "integrity", "golden"}) {
    if (*gen::inRange(0, 4) == 0) c->checks.emplace_back(check);
  }
  if (*gen::arbitrary<bool>()) std::reverse(c->checks.begin(), c->checks.end());
  c->tolerance.kind = *gen::element(ToleranceKind::kBound, ToleranceKind::kExact, ToleranceKind::kExplicit);
  if (c->tolerance.kind == ToleranceKind::kExplicit) {
    c->tolerance.rtol = std::abs(*gen::arbitrary<double>());
    c->tolerance.atol = *gen::element(0.0, 5e-324, 1e-7, std::numeric_limits<double>::max());
  }
  c->deterministic = *gen::arbitrary<bool>();
  if (*gen::arbitrary<bool>()) {
    c->expect.pass = false;
    c->expect.error = gen_text();
    c->expect.error.insert(c->expect.error.begin(), 'e');  // never empty
  }
}

Case gen_raw_case() {
  Case c;
  const size_t rank = *gen::inRange<size_t>(1, 4);
  switch (*gen::inRange(0, 3)) {
    case 0:
      gen_conv_op(&c, rank, false);
      break;
    case 1:
      gen_conv_op(&c, rank, true);
      break;
    default:
      gen_pool_op(&c, rank);
      break;
  }
  gen_options(&c);
  return c;
}

double gen_value() {
  const double v =
      *gen::oneOf(gen::arbitrary<double>(), gen::map(gen::inRange(-100, 100), [](int i) { return i / 8.0; }),
                  gen::element(std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity(), -0.0, 5e-324, 1e-310, 0.1,
                               std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest()));
  return std::isnan(v) ? std::numeric_limits<double>::quiet_NaN() : v;
}

Tensor gen_tensor(const Dims& shape, DType dtype, bool round) {
  Tensor t;
  t.shape = shape;
  t.dtype = round ? dtype : DType::kF64;
  for (int64_t i = 0; i < element_count(shape); ++i) {
    const double v = gen_value();
    t.data.push_back(round ? round_to(dtype, v) : v);
  }
  return t;
}

// Up to three `data: zero:` regions within the inputs' shapes, each part present or not.
void gen_zero_regions(Case* c, const std::map<std::string, Dims>& inputs) {
  const int count = *gen::inRange(0, 4);
  for (int i = 0; i < count; ++i) {
    const std::string name = *gen::elementOf(std::vector<std::string>{"x", "w", "dy"});
    if (!inputs.count(name)) continue;  // a max pool has no w
    const Dims& shape = inputs.at(name);
    ZeroRegion r;
    r.tensor = name == "x" ? ZeroTensor::kX : name == "w" ? ZeroTensor::kW : ZeroTensor::kDy;
    if (*gen::arbitrary<bool>()) r.sample = *gen::inRange<int64_t>(0, shape[0]);
    if (*gen::arbitrary<bool>()) r.channel = *gen::inRange<int64_t>(0, shape[1]);
    if (*gen::arbitrary<bool>()) {
      for (size_t d = 2; d < shape.size(); ++d) {
        const int64_t lo = *gen::inRange<int64_t>(0, shape[d]);
        r.box.push_back({lo, *gen::inRange<int64_t>(lo + 1, shape[d] + 1)});
      }
    }
    c->data.zero.push_back(std::move(r));
  }
}

// Inline tensors and golden outputs with the shapes the (valid) case needs.
void gen_tensors(Case* c) {
  std::map<std::string, Dims> inputs, outputs;
  if (std::holds_alternative<MaxPoolParams>(c->op)) {
    const PoolGeometry g = unchecked_pool_geometry(*c);
    inputs = {{"x", g.x_shape()}, {"dy", g.y_shape()}};
    outputs = {{"y", g.y_shape()}};
    if (g.mode == PoolMode::kTraining) outputs["dx"] = g.x_shape();  // inference: no indices, no backward
    if (g.mode == PoolMode::kTraining && *gen::arbitrary<bool>()) {
      Tensor idx = Tensor::zeros(DType::kF64, g.y_shape());
      for (double& v : idx.data) v = static_cast<double>(*gen::inRange<int64_t>(0, g.spatial.in_count()));
      c->expected["indices"] = idx;
    }
  } else {
    const ConvGeometry g = unchecked_conv_geometry(*c);
    inputs = {{"x", g.x_shape()}, {"w", g.w_shape()}, {"dy", g.y_shape()}};
    outputs = {{"y", g.y_shape()}, {"dx", g.x_shape()}, {"dw", g.w_shape()}};
    if (g.bias) inputs["b"] = outputs["db"] = g.b_shape();
  }
  for (const auto& [name, shape] : inputs) {
    if (*gen::inRange(0, 3) == 0) c->tensors[name] = gen_tensor(shape, c->dtype, true);
  }
  gen_zero_regions(c, inputs);
  for (const auto& [name, shape] : outputs) {
    if (*gen::inRange(0, 4) == 0) c->expected[name] = gen_tensor(shape, c->dtype, false);
  }
}

// Valid before its tensors are added, and again after: inline tensors and golden
// outputs change what some rules ask (an expected dx makes `exact` on an overlapping
// max pool depend on the order dy is summed in).
rc::Gen<Case> gen_valid_case() {
  const auto valid = [](const Case& c) { return validate(c).ok(); };
  return gen::suchThat(gen::mapcat(gen::suchThat(gen::exec(gen_raw_case), valid),
                                   [](Case c) {
                                     return gen::exec([c] {
                                       Case with = c;
                                       gen_tensors(&with);
                                       // A check that can never apply is refused on reading (core/check_table.h).
                                       std::erase_if(with.checks, [&](const std::string& n) {
                                         return !check_never_applies(with, n).empty();
                                       });
                                       return with;
                                     });
                                   }),
                       valid);
}

Case reload(const std::string& text) {
  const std::vector<LoadedCase> v = parse_cases(text, "prop.yaml");
  RC_ASSERT(v.size() == 1u);
  if (!v[0].c.ok()) RC_FAIL(v[0].c.status().to_string() + "\nfile:\n" + text);
  return v[0].c.value();
}

// Every error names the file and a line ("prop.yaml:N: ..."); every case is valid.
void expect_well_formed(const std::vector<LoadedCase>& v) {
  RC_ASSERT(!v.empty());
  for (const LoadedCase& e : v) {
    if (e.c.ok()) {
      RC_ASSERT(validate(e.c.value()).ok());
      continue;
    }
    const std::string m = e.c.status().message();
    RC_ASSERT(m.rfind("prop.yaml:", 0) == 0);
    RC_ASSERT(m.size() > 10 && std::isdigit(static_cast<unsigned char>(m[10])));
  }
}

RC_GTEST_PROP(CaseIoProp, BlockFileRoundTrips, ()) {
  const Case c = *gen_valid_case();
  const std::string yaml = case_to_yaml(c);
  RC_ASSERT(reload(yaml) == c);
}

RC_GTEST_PROP(CaseIoProp, OneLineReproducerRoundTrips, ()) {
  const Case c = *gen_valid_case();
  const std::string line = case_to_one_line(c);
  RC_ASSERT(line.find('\n') == std::string::npos);
  RC_ASSERT(reload(line) == c);
}

RC_GTEST_PROP(CaseIoProp, RandomBytesNeverCrash, (const std::string& bytes)) {
  expect_well_formed(parse_cases(bytes, "prop.yaml"));
}

RC_GTEST_PROP(CaseIoProp, MangledFilesNeverCrash, ()) {
  std::string text = *gen::element(true, false) ? case_to_yaml(*gen_valid_case()) : case_to_one_line(*gen_valid_case());
  const int edits = *gen::inRange(1, 6);
  for (int i = 0; i < edits && !text.empty(); ++i) {
    const size_t at = *gen::inRange<size_t>(0, text.size());
    switch (*gen::inRange(0, 4)) {
      case 0:
        text.erase(at, *gen::inRange<size_t>(1, 20));
        break;
      case 1:
        text.insert(at, gen_text());
        break;
      case 2:
        text[at] = *gen::arbitrary<char>();
        break;
      default:
        text.resize(at);
        break;
    }
  }
  expect_well_formed(parse_cases(text, "prop.yaml"));
}

}  // namespace
}  // namespace kc
