// The fuzz loop steers each generated case's data seed in the worker that checks it
// (gen/fuzz_session.h): the seed a case was checked on is the one reported and saved,
// and a worker that dies while steering ends that case, not the run, and names the
// seed the oracle died on. The steering is planted here (Settings::steer): the real
// one runs the oracle, which does not crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gen/boundary_sweep.h"
#include "gen/fuzz_session.h"
#include "kc/case_io.h"
#include "kc/runner.h"
#include "support/delegating_backend.h"

namespace kc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The data seed case `index` of the run is drawn with, before steering.
uint64_t drawn_seed(gen::OpSet ops, uint64_t seed, uint64_t index) {
  gen::Options o;
  o.steer = false;
  return gen::generate(gen::fuzz_case(ops, o), seed, index).value().data.seed;
}

std::string seed_field(uint64_t seed) { return "seed: " + std::to_string(seed); }

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The index in "fuzz seed S case N", or -1 for a replayed case.
int64_t case_index(const CaseResult& r) {
  const size_t at = r.case_name.rfind(" case ");
  if (r.case_name.rfind("fuzz seed ", 0) != 0 || at == std::string::npos) return -1;
  return std::stoll(r.case_name.substr(at + 6));
}

// A fresh folder of this process's own, so that two runs of the test cannot collide.
fuzz::Settings settings(const std::string& name) {
  fuzz::Settings s;
  s.ops = gen::only<ConvParams>();
  s.seed = 11;
  s.count = 40;  // with one job, batches of 16: slots are reused across batches
  s.jobs = 1;
  s.shrink_time = 2;
  s.timeout = 60;
  s.save_dir = ::testing::TempDir() + name + "-" + std::to_string(getpid());
  std::error_code ec;
  std::filesystem::remove_all(s.save_dir, ec);
  return s;
}

// The planted steering of the first test: a seed that is a function of the case's other
// fields (those a case file keeps as they are), so that a saved case shows whether it
// was saved as steered.
uint64_t steered_seed(const Case& c) {
  std::string key =
      std::string(dtype_name(c.dtype)) + " " + std::to_string(c.input.batch) + " " + std::to_string(c.input.channels);
  for (int64_t d : c.input.spatial) key += " " + std::to_string(d);
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ull;
  return h % 1000000007ull;
}

TEST(FuzzSession, TheSeedACaseWasCheckedOnIsTheOneReportedAndSaved) {
  // Every case is steered, in the worker, to steered_seed() of its other fields; the
  // backend fails every forward, so the first case is shrunk and saved.
  fuzz::Settings s = settings("kc_fuzz_steered");
  s.steer = [](Case c, const std::function<void(uint64_t)>& trying) {
    trying(c.data.seed);
    c.data.seed = steered_seed(c);
    trying(c.data.seed);
    return c;
  };
  Registry reg;
  ASSERT_TRUE(reg.add("off-by-one",
                      [] {
                        class OffByOne : public test::DelegatingBackend {
                         public:
                          OffByOne() : DelegatingBackend("off-by-one") {}
                          Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                                              bool relu, Tensor& y) override {
                            KC_RETURN_IF_ERROR(DelegatingBackend::conv_forward(g, x, w, b, relu, y));
                            y[0] += 1.0;
                            return ok_status();
                          }
                        };
                        return std::make_unique<OffByOne>();
                      })
                  .ok());
  s.backend = "off-by-one";
  const fuzz::Outcome out = fuzz::run(s, reg);
  ASSERT_EQ(out.generated, 40);
  int64_t seen = 0;
  for (const CaseResult& r : out.results) {
    const int64_t i = case_index(r);
    if (i < 0) continue;
    ++seen;
    gen::Options o;
    o.steer = false;
    const Case drawn = gen::generate(gen::fuzz_case(s.ops, o), s.seed, static_cast<uint64_t>(i)).value();
    EXPECT_THAT(r.reproducer, HasSubstr(seed_field(steered_seed(drawn)))) << r.case_name;
  }
  EXPECT_EQ(seen, 40);
  ASSERT_EQ(out.saved.size(), 1u);
  EXPECT_GT(out.saved[0].steps, 0);  // the shrunk case is another case than the original
  // Each saved case carries the seed it was checked on (its own steered seed), and fails again.
  for (const std::string& path : {out.saved[0].original, out.saved[0].shrunk}) {
    const std::vector<LoadedCase> loaded = load_case_file(path);
    ASSERT_EQ(loaded.size(), 1u) << path;
    ASSERT_TRUE(loaded[0].c.ok()) << path;
    EXPECT_EQ(loaded[0].c->data.seed, steered_seed(*loaded[0].c)) << path;
    const std::unique_ptr<Backend> be = reg.make("off-by-one");
    EXPECT_EQ(check_case(*loaded[0].c, *be).disposition, Disposition::kFailed) << path;
  }
  std::error_code ec;
  std::filesystem::remove_all(s.save_dir, ec);
}

TEST(FuzzSession, AWorkerThatDiesWhileSteeringEndsItsCaseNotTheRunAndNamesTheSeed) {
  // Steering dies (SIGABRT) on the third seed it tries for every third drawn seed;
  // the others are steered to seed + 1. The backend itself aborts in some forwards
  // (x[0] > 0.5): an oracle crash and a backend crash are two kinds, each saved.
  fuzz::Settings s = settings("kc_fuzz_steer_crash");
  auto dies = [](uint64_t drawn) { return drawn % 3 == 0; };
  s.steer = [dies](Case c, const std::function<void(uint64_t)>& trying) {
    for (uint64_t k = 0; k < 3; ++k) {
      trying(c.data.seed + k);
      if (k == 2 && dies(c.data.seed)) std::abort();
    }
    c.data.seed += 1;
    return c;
  };
  Registry reg;
  ASSERT_TRUE(reg.add("crashy",
                      [] {
                        class Crashy : public test::DelegatingBackend {
                         public:
                          Crashy() : DelegatingBackend("crashy") {}
                          Status conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                                              bool relu, Tensor& y) override {
                            if (x[0] > 0.5) std::abort();
                            return DelegatingBackend::conv_forward(g, x, w, b, relu, y);
                          }
                        };
                        return std::make_unique<Crashy>();
                      })
                  .ok());
  s.backend = "crashy";
  const fuzz::Outcome out = fuzz::run(s, reg);
  ASSERT_EQ(out.generated, 40);  // the run went on past every crash
  int64_t steering = 0, backend = 0;
  std::string first_crash;  // the seed field the first steering crash was reported on
  for (const CaseResult& r : out.results) {
    const int64_t i = case_index(r);
    if (i < 0) {  // replayed (cases/regressions, when run from the source tree): never steered
      backend += r.disposition == Disposition::kCrashed;
      continue;
    }
    const uint64_t drawn = drawn_seed(s.ops, s.seed, static_cast<uint64_t>(i));
    if (!dies(drawn)) {
      EXPECT_THAT(r.reproducer, HasSubstr(seed_field(drawn + 1))) << r.case_name;
      EXPECT_THAT(r.message, Not(HasSubstr("while the oracle judged"))) << r.case_name;
      backend += r.disposition == Disposition::kCrashed;
      continue;
    }
    ++steering;
    EXPECT_EQ(r.disposition, Disposition::kCrashed) << r.case_name;
    EXPECT_THAT(r.message, HasSubstr("while the oracle judged the case's data seed " + std::to_string(drawn + 2) +
                                     " for steering"));
    EXPECT_THAT(r.reproducer, HasSubstr(seed_field(drawn + 2))) << r.case_name;
    if (first_crash.empty()) first_crash = seed_field(drawn + 2);
  }
  ASSERT_GT(steering, 0) << "no drawn seed of this run is a multiple of 3: pick another run seed";
  ASSERT_GT(backend, 0) << "no case of this run has x[0] > 0.5: pick another run seed";
  EXPECT_EQ(out.failed_checks.at("steering_crashed"), steering);
  EXPECT_EQ(out.failed_checks.at("crashed"), backend);
  ASSERT_EQ(out.saved.size(), 2u);
  for (const fuzz::Saved& saved : out.saved) {
    const std::string text = read(saved.original);
    if (saved.check == "steering_crashed") {
      EXPECT_THAT(text, HasSubstr("while the oracle judged the case's data seed"));
      EXPECT_THAT(text, HasSubstr(first_crash));  // a run of the saved file feeds the oracle that data
    } else {
      EXPECT_EQ(saved.check, "crashed");
      EXPECT_THAT(text, Not(HasSubstr("while the oracle judged")));
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(s.save_dir, ec);
}

}  // namespace
}  // namespace kc
