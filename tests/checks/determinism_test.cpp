// The determinism check: repeated runs and runs on refilled buffers; each planted bug
// (a race, an address cache) is caught with the diagnosis that names it.
#include <gtest/gtest.h>

#include "core/validate.h"
#include "rules_support.h"

using namespace kc;
using namespace kc::rules_test;

TEST(DeterminismCheck, PassThroughIsBitwiseRepeatable) {
  PassThrough pass;
  const std::vector<Case> cases = good_cases();
  for (Case c : cases) {
    SCOPED_TRACE(case_to_one_line(c));
    c.deterministic = true;
    expect_check(c, pass, "determinism", Disposition::kPassed, {"4 runs bitwise equal"});
  }
}

// A forward that memoizes y by its input buffers' addresses: an allocator that hands the
// same address to new data gets the old y back.
class CachesByAddress final : public DelegatingBackend {
 public:
  CachesByAddress() : DelegatingBackend("caches-by-address") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (x.data.data() == last_x_ && w.data.data() == last_w_ && y.size() == static_cast<int64_t>(last_y_.size())) {
      std::copy(last_y_.begin(), last_y_.end(), y.data.begin());
      return ok_status();
    }
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    last_x_ = x.data.data();
    last_w_ = w.data.data();
    last_y_.assign(y.data.begin(), y.data.end());
    return ok_status();
  }

 private:
  const double* last_x_ = nullptr;
  const double* last_w_ = nullptr;
  std::vector<double> last_y_;
};

TEST(DeterminismCheck, CatchesOutputsCachedByBufferAddress) {
  CachesByAddress be;
  expect_check(good_conv_cases()[0], be, "determinism", Disposition::kFailed,
               {"outputs on input buffers refilled in place with new values (x, w, b and dy) differ from the same "
                "values' outputs in fresh buffers beyond twice the tolerance (y), and are bitwise the old values' "
                "outputs: the backend keeps something by its buffers' addresses"});
  PassThrough pass;
  const CheckResult ok = run_check(good_conv_cases()[0], pass, "determinism");
  EXPECT_DISPOSITION(ok, Disposition::kPassed);
  EXPECT_MESSAGE_HAS(ok, "input buffers refilled in place with new values gave no outputs of the old ones");
}

// Rounding noise that starts after the repeated runs (an atomic order that changes only
// later) makes the refilled run differ from the fresh one, but not equal to the old
// values' outputs: not taken for a cache.
class NoisyFromTheSixthCall final : public DelegatingBackend {
 public:
  NoisyFromTheSixthCall() : DelegatingBackend("noisy-from-the-sixth-call") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    if (++calls_ >= 6 && calls_ % 2 == 0) {
      for (double& v : y.data) v = std::nextafter(v, INFINITY);
    }
    return ok_status();
  }

 private:
  int calls_ = 0;
};

TEST(DeterminismCheck, LateRoundingNoiseIsNotTakenForACache) {
  NoisyFromTheSixthCall be;
  Case c = good_conv_cases()[0];
  c.deterministic = true;
  const CheckResult r = run_check(c, be, "determinism");
  EXPECT_DISPOSITION(r, Disposition::kPassed);
  EXPECT_EQ(r.message.find("addresses"), std::string::npos) << r.message;
}

TEST(DeterminismCheck, IsSkippedOnTheOracle) {
  auto oracle = make_reference_backend();
  EXPECT_DISPOSITION(run_check(good_conv_cases()[0], *oracle, "determinism"), Disposition::kSkipped);
}

TEST(DeterminismCheck, FailsARaceWhenTheCaseRequiresDeterminism) {
  Case c = good_conv_cases()[1];
  c.deterministic = true;
  RacyWeightGradient be;
  const CheckResult r = run_check(c, be, "determinism");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "nondeterministic: dw differs between run 1 and run 2 at 3 elements, max |diff| ");
  EXPECT_GT(r.max_abs_error, 0.0);
}

TEST(DeterminismCheck, ReportsARaceAsPassedWhenNotRequired) {
  Case c = good_conv_cases()[1];
  c.deterministic = false;
  RacyWeightGradient be;
  expect_check(c, be, "determinism", Disposition::kPassed, {"nondeterministic", "dw differs between run 1 and run 2"});
}
