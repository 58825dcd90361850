// The state check (same shape and across shapes) and the determinism refill, against
// planted bugs: a plan cached under a key that misses the batch, a cache of converted
// weights kept by buffer address; and against a correct kernel whose dw is summed in a
// random order, which must pass every time (never "state", never "a cache").
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "rules_support.h"

using namespace kc;
using namespace kc::rules_test;

namespace {

// The named check with a factory for fresh instances (as kcheck's workers have one).
CheckResult run_with_factory(Case c, Backend& be, const Registry::Factory& fresh, const std::string& name) {
  c.checks = {name};
  const CaseResult r = check_case(c, be, &fresh);
  for (const CheckResult& cr : r.checks) {
    if (cr.name == name) return cr;
  }
  return make_result(name, Disposition::kCrashed, "check not reported: " + r.message);
}

Case small_conv(int64_t batch) {
  return test::conv_case(
      {.batch = batch, .channels = 2, .out_channels = 3, .spatial = {6, 5}, .kernel = {3, 3}, .dtype = DType::kF32});
}

// A plan made on the first call and looked up by channels and extents only: a later
// batch runs the plan's grid, which covers the first call's samples alone.
class BatchBlindPlan final : public DelegatingBackend {
 public:
  BatchBlindPlan() : DelegatingBackend("batch-blind-plan") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    KC_RETURN_IF_ERROR(reference().conv_forward(g, x, w, b, relu, y));
    if (plan_batch_ == 0) plan_batch_ = g.batch;
    const int64_t per_sample = y.size() / g.batch;
    for (int64_t i = plan_batch_ * per_sample; i < y.size(); ++i) y[i] = 0.0;
    return ok_status();
  }

 private:
  int64_t plan_batch_ = 0;
};

TEST(StateCheck, NamesTheVariantWhoseFieldAPlanCacheMisses) {
  BatchBlindPlan be;
  const Registry::Factory fresh = [] { return std::make_unique<BatchBlindPlan>(); };
  const CheckResult r = run_with_factory(small_conv(1), be, fresh, "state");
  EXPECT_DISPOSITION(r, Disposition::kFailed);
  EXPECT_MESSAGE_HAS(r, "results depend on a call of another shape: batch 1 -> 2, after the case: y differs");
  // The same-shape sequence alone cannot see it, and without a factory it is not run.
  const CheckResult alone = run_check(small_conv(1), be, "state");
  EXPECT_DISPOSITION(alone, Disposition::kPassed);
  EXPECT_MESSAGE_HAS(alone, "shapes not varied (no factory for fresh instances)");
}

TEST(StateCheck, ACorrectBackendPassesEveryVariant) {
  PassThrough be;
  const Registry::Factory fresh = [] { return std::make_unique<PassThrough>(); };
  const CheckResult r = run_with_factory(small_conv(2), be, fresh, "state");
  EXPECT_DISPOSITION(r, Disposition::kPassed);
  EXPECT_MESSAGE_HAS(r, "then variants (batch 2 -> 3, extents [6, 5] -> [7, 6], channels 2 -> 3, out channels 3 -> 4");
}

// A correct conv whose dw is summed in a random order each call (float atomics): dw
// moves by an ulp at random elements.
class RandomOrderDw final : public DelegatingBackend {
 public:
  RandomOrderDw() : DelegatingBackend("random-order-dw") {}
  Status conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                       const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db) override {
    KC_RETURN_IF_ERROR(reference().conv_backward(g, x, w, b, relu, dy, dx, dw, db));
    std::uniform_int_distribution<int> move(-1, 1);
    for (double& v : dw.data) {
      const int m = move(rng_);
      if (m != 0) v = static_cast<float>(std::nextafter(static_cast<float>(v), m > 0 ? INFINITY : -INFINITY));
    }
    return ok_status();
  }

 private:
  std::mt19937 rng_{std::random_device{}()};
};

TEST(StateCheck, OrderNoiseIsNeverStateNorACache) {
  const Registry::Factory fresh = [] { return std::make_unique<RandomOrderDw>(); };
  for (int run = 0; run < 20; ++run) {
    RandomOrderDw be;
    const CheckResult s = run_with_factory(small_conv(2), be, fresh, "state");
    EXPECT_DISPOSITION(s, Disposition::kPassed);
    const CheckResult d = run_check(small_conv(2), be, "determinism");
    EXPECT_DISPOSITION(d, Disposition::kPassed);
    EXPECT_EQ(d.message.find("addresses"), std::string::npos) << d.message;
  }
  // Where the case requires determinism, determinism fails it and state still does not
  // take the noise for state.
  Case c = small_conv(2);
  c.deterministic = true;
  RandomOrderDw be;
  const CheckResult s = run_with_factory(c, be, fresh, "state");
  EXPECT_DISPOSITION(s, Disposition::kPassed);
  EXPECT_MESSAGE_HAS(s, "fresh calls differ from each other");
  EXPECT_DISPOSITION(run_check(c, be, "determinism"), Disposition::kFailed);
}

// Converted weights cached by w's buffer address: new weights in the same buffer are
// never read again.
class CachesWeightsByAddress final : public DelegatingBackend {
 public:
  CachesWeightsByAddress() : DelegatingBackend("caches-weights-by-address") {}
  Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, bool relu,
                      Tensor& y) override {
    if (w.data.data() != last_w_ || w.size() != cached_.size()) {
      cached_ = w;
      last_w_ = w.data.data();
    }
    return reference().conv_forward(g, x, cached_, b, relu, y);
  }

 private:
  const double* last_w_ = nullptr;
  Tensor cached_;
};

TEST(DeterminismRefill, ChangesTheWeightsInPlaceAndCatchesAWeightCacheByAddress) {
  CachesWeightsByAddress be;
  expect_check(small_conv(2), be, "determinism", Disposition::kFailed,
               {"outputs on input buffers refilled in place with new values (x, w, b and dy) differ from the same "
                "values' outputs in fresh buffers beyond twice the tolerance (y)",
                "the backend keeps something by its buffers' addresses"});
  // Not the old values' outputs: the weights are old, x is new.
  EXPECT_EQ(run_check(small_conv(2), be, "determinism").message.find("bitwise the old"), std::string::npos);
}

}  // namespace
