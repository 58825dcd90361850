// golden: outputs against `expected:` tensors (hand-worked values), the trust rule on
// them, and a backward the backend does not implement (its gradients left unjudged).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "checks/checks.h"
#include "kc/runner.h"
#include "support/case_builders.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

TEST(GoldenCheck, HandWorkedExpectedValues) {
  // 1-D valid conv, k 2, w = [1, -1], x = [1, 2, 4]: y = [1-2, 2-4] = [-1, -2].
  Case c = test::conv_case({.spatial = {3}, .kernel = {2}, .dtype = DType::kF32});
  c.tensors["x"] = Tensor::zeros(DType::kF32, {1, 1, 3});
  c.tensors["x"].data = {1, 2, 4};
  c.tensors["w"] = Tensor::zeros(DType::kF32, {1, 1, 2});
  c.tensors["w"].data = {1, -1};
  c.expected["y"] = Tensor::zeros(DType::kF64, {1, 1, 2});
  c.expected["y"].data = {-1, -2};
  c.checks = {"golden"};
  auto ref = make_reference_backend();
  EXPECT_EQ(check_case(c, *ref).disposition, Disposition::kPassed);
  c.expected["y"].data = {-1, -3};
  const CaseResult r = check_case(c, *ref);
  EXPECT_EQ(r.disposition, Disposition::kFailed);
  ASSERT_NE(find_check(r, "golden"), nullptr);
  EXPECT_EQ(find_check(r, "golden")->worst.at(0).index, (std::vector<int64_t>{0, 0, 1}));
}

// The trust rule holds for expected values: all-zero ones, which a kernel writing zeros
// matches, make a pass MISTRUSTED; a mismatch still fails.
TEST(GoldenCheck, AllZeroExpectedValuesAreMistrusted) {
  Case c = test::conv_case({.spatial = {3}, .kernel = {2}, .dtype = DType::kF32});
  c.tensors["x"] = Tensor::zeros(DType::kF32, {1, 1, 3});
  c.tensors["w"] = Tensor::zeros(DType::kF32, {1, 1, 2});
  c.tensors["w"].data = {1, -1};
  c.expected["y"] = Tensor::zeros(DType::kF64, {1, 1, 2});
  c.checks = {"golden"};
  auto ref = make_reference_backend();
  CaseResult r = check_case(c, *ref);
  ASSERT_NE(find_check(r, "golden"), nullptr);
  EXPECT_EQ(find_check(r, "golden")->disposition, Disposition::kMistrusted);
  EXPECT_NE(find_check(r, "golden")->message.find("expected y is all zero"), std::string::npos)
      << find_check(r, "golden")->message;
  c.expected["y"].data = {0, 1};
  r = check_case(c, *ref);
  EXPECT_EQ(find_check(r, "golden")->disposition, Disposition::kFailed);
}

// A backend whose backward returns `status` (a peer without one call, or a broken one).
class BackwardReturns final : public test::DelegatingBackend {
 public:
  explicit BackwardReturns(Status status) : DelegatingBackend("backward-returns"), status_(std::move(status)) {}
  Status conv_backward(const ConvGeometry&, const Tensor&, const Tensor&, const Tensor*, bool, const Tensor&, Tensor&,
                       Tensor&, Tensor*) override {
    return status_;
  }

 private:
  Status status_;
};

// An unimplemented backward leaves golden's gradients unjudged and named, as the other
// checks SKIP them: y is still judged (a wrong y fails); with gradients alone expected,
// golden is SKIPPED. Any other backward error fails.
TEST(GoldenCheck, AnUnimplementedBackwardLeavesTheGradientsUnjudged) {
  Case c = test::conv_case({.spatial = {3}, .kernel = {2}, .dtype = DType::kF32});
  c.tensors["x"] = Tensor::zeros(DType::kF32, {1, 1, 3});
  c.tensors["x"].data = {1, 2, 4};
  c.tensors["w"] = Tensor::zeros(DType::kF32, {1, 1, 2});
  c.tensors["w"].data = {1, -1};
  c.tensors["dy"] = Tensor::zeros(DType::kF32, {1, 1, 2});
  c.tensors["dy"].data = {1, 2};
  c.expected["y"] = Tensor::zeros(DType::kF64, {1, 1, 2});
  c.expected["y"].data = {-1, -2};
  c.expected["dw"] = Tensor::zeros(DType::kF64, {1, 1, 2});
  c.expected["dw"].data = {1 * 1 + 2 * 2, 2 * 1 + 4 * 2};  // dw[k] = sum_i dy[i] x[i + k]
  c.checks = {"golden"};
  BackwardReturns peer(unimplemented("no backward filter for this dtype"));
  CaseResult r = check_case(c, peer);
  ASSERT_NE(find_check(r, "golden"), nullptr);
  EXPECT_EQ(find_check(r, "golden")->disposition, Disposition::kPassed) << find_check(r, "golden")->message;
  EXPECT_NE(find_check(r, "golden")->message.find("dw not judged: the backward returned"), std::string::npos)
      << find_check(r, "golden")->message;
  // An expected tensor left unjudged cannot make the pass MISTRUSTED (an all-zero dx would).
  Case with_zero_dx = c;
  with_zero_dx.expected["dx"] = Tensor::zeros(DType::kF64, {1, 1, 3});
  r = check_case(with_zero_dx, peer);
  EXPECT_EQ(find_check(r, "golden")->disposition, Disposition::kPassed) << find_check(r, "golden")->message;
  EXPECT_NE(find_check(r, "golden")->message.find("dw, dx not judged"), std::string::npos)
      << find_check(r, "golden")->message;
  c.expected["y"].data = {-1, -3};
  EXPECT_EQ(find_check(check_case(c, peer), "golden")->disposition, Disposition::kFailed);
  c.expected.erase("y");
  EXPECT_EQ(find_check(check_case(c, peer), "golden")->disposition, Disposition::kSkipped);
  auto ref = make_reference_backend();
  EXPECT_EQ(find_check(check_case(c, *ref), "golden")->disposition, Disposition::kPassed);
  BackwardReturns broken(internal_error("launch failed"));
  EXPECT_EQ(find_check(check_case(c, broken), "golden")->disposition, Disposition::kFailed);
}

}  // namespace
}  // namespace kc
