// The trust rule's geometry (DESIGN section 4, Trust): a conv's dx is judged on the
// input elements some window reads (conv_input_read, distrust_output), so zeros that a
// stride or padding alone makes do not mistrust a case, while a dx of zeros still fails.
#include <gtest/gtest.h>

#include <algorithm>

#include "kc/checks.h"
#include "kc/invoke.h"
#include "kc/runner.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

// A 3-D conv with kernel 1 and stride 3 reads one input element in 27: the other 26
// have dx 0 whatever the data. The trust rule judges dx on the elements some window
// reads, so such a case is checked, not MISTRUSTED; a dx of zeros still fails.
TEST(BackwardCheck, DxThatTheGeometryMakesZeroIsJudgedOnTheElementsWindowsRead) {
  Case c = test::conv_case({.batch = 1, .channels = 2, .out_channels = 3, .spatial = {6, 6, 6}, .kernel = {1, 1, 1},
                            .stride = {3, 3, 3}, .padding = test::pad_kind(PadKind::kValid)});
  c.data.seed = 21;
  c.checks = {"backward", "gradcheck"};
  const ConvGeometry g = *conv_geometry(c);
  const std::vector<char> read = conv_input_read(g);
  ASSERT_EQ(read.size(), 2u * 216u);
  EXPECT_EQ(std::count(read.begin(), read.end(), 1), 2 * 8);  // coordinates 0 and 3 in each dim
  EXPECT_TRUE(read[0] && read[3] && !read[1] && read[3 * 36 + 3 * 6 + 3] && !read[216 + 1]);
  test::DelegatingBackend right("right");
  const CaseResult ok = check_case(c, right);
  for (const char* name : {"backward", "gradcheck"}) {
    const CheckResult* k = find_check(ok, name);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->disposition, Disposition::kPassed) << name << ": " << k->message;
  }
  const OpInputs in = *make_inputs(c);
  const OpOutputs ref = invoke(right, c, OpGeometry{g}, in);
  EXPECT_NE(distrust("dx", ref.dx).find("is mostly zero (416 of 432)"), std::string::npos);  // the plain rule
  EXPECT_EQ(distrust_output(OpGeometry{g}, "dx", ref.dx), "");
  Tensor sparse = ref.dx;  // all but the first element windows read set to 0
  for (int64_t i = 1; i < sparse.size(); ++i) sparse[i] = 0.0;
  EXPECT_NE(distrust_output(OpGeometry{g}, "dx", sparse).find("mostly zero (15 of 16 elements some window reads)"),
            std::string::npos)
      << distrust_output(OpGeometry{g}, "dx", sparse);
  class ZeroDx : public test::DelegatingBackend {
   public:
    ZeroDx() : DelegatingBackend("zero-dx") {}
    Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                         const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
      KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
      std::fill(dx.data.begin(), dx.data.end(), 0.0);
      return ok_status();
    }
  } zero;
  const CheckResult* bad = find_check(check_case(c, zero), "backward");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->disposition, Disposition::kFailed) << bad->message;
}

// Reflect padding copies border elements into the padding, so a window that reads only
// padding still reads them: they count as read.
TEST(BackwardCheck, PaddingCopiesCountAsReadForTheTrustRule) {
  const Case c = test::conv_case({.spatial = {5}, .kernel = {1}, .stride = {3}, .padding = test::explicit_pad({{2, 2}}),
                                  .mode = PaddingMode::kReflect});
  const ConvGeometry g = *conv_geometry(c);
  // Padded coordinates 0, 3, 6 are inputs -2 (reflect: 2), 1 and 4.
  EXPECT_EQ(conv_input_read(g), (std::vector<char>{0, 1, 1, 0, 1}));
  Case zeros = c;
  std::get<ConvParams>(zeros.op).padding_mode = PaddingMode::kZeros;
  EXPECT_EQ(conv_input_read(*conv_geometry(zeros)), (std::vector<char>{0, 1, 0, 0, 1}));
  // Every window on zero padding alone: dx is zero by construction, and says so.
  const Case unread = test::conv_case({.spatial = {1}, .kernel = {1}, .stride = {2},
                                       .padding = test::explicit_pad({{1, 0}}), .bias = true});
  const ConvGeometry ug = *conv_geometry(unread);
  EXPECT_EQ(conv_input_read(ug), std::vector<char>{0});
  EXPECT_EQ(distrust_output(OpGeometry{ug}, "dx", Tensor::zeros(DType::kF64, {1, 1, 1})),
            "reference dx is all zero: no window reads any element of x");
}

}  // namespace
}  // namespace kc
