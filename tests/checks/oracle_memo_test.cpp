// OracleMemo: keys that tell apart inputs differing in a few high bits, values kept and
// found, a budget that bounds it, gets from many threads at once; and the runner with a
// memo shared across backends gives the verdicts it gives without one.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "checks/checks.h"
#include "checks/oracle_memo.h"
#include "checks/small_cases.h"
#include "kc/runner.h"
#include "support/f32_direct.h"

namespace kc::checks {
namespace {

Tensor unit(int64_t n, int64_t j, double v = 1.0) {
  Tensor t = Tensor::zeros(DType::kF64, {n});
  t[j] = v;
  return t;
}

// Unit cotangents differ only in the high bits of one word: every one must get its own key
// (a hash whose multiplies only carry bits upward gives such inputs a few bits of entropy).
TEST(MemoKey, UnitVectorsAndSignsGetKeysOfTheirOwn) {
  std::set<uint64_t> keys;
  const int64_t n = 4096;
  for (int64_t j = 0; j < n; ++j) {
    keys.insert(MemoKey("row").add(unit(n, j)).value());
    keys.insert(MemoKey("row").add(unit(n, j, -1.0)).value());
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(2 * n));
  EXPECT_NE(MemoKey("a").add(unit(8, 0)).value(), MemoKey("b").add(unit(8, 0)).value());
  EXPECT_NE(MemoKey("a").add(int64_t{1}).add(int64_t{2}).value(), MemoKey("a").add(int64_t{2}).add(int64_t{1}).value());
}

TEST(OracleMemo, KeepsAValueAndFindsItByItsKey) {
  OracleMemo memo;
  int made = 0;
  auto make = [&] {
    ++made;
    return unit(16, 3, 2.5);
  };
  const Tensor a = memo.get<Tensor>(7, make), b = memo.get<Tensor>(7, make);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(memo.hits(), 1);
  EXPECT_EQ(b.data[3], 2.5);
  EXPECT_EQ(a.shape, b.shape);
  memo.get<Tensor>(8, make);
  EXPECT_EQ(made, 2);
}

TEST(OracleMemo, PastItsBudgetValuesAreComputedAndNotKept) {
  OracleMemo memo(4096);
  int made = 0;
  for (int round = 0; round < 2; ++round) {
    for (uint64_t k = 0; k < 8; ++k) {
      const Tensor t = memo.get<Tensor>(k, [&] {
        ++made;
        return unit(128, static_cast<int64_t>(k));  // 1 KiB each
      });
      EXPECT_EQ(t[static_cast<int64_t>(k)], 1.0);
    }
  }
  EXPECT_LE(memo.bytes(), 4096u);
  EXPECT_GT(made, 8);   // what did not fit was made again
  EXPECT_LT(made, 16);  // what fit was found
}

// Gradcheck's probes run on several threads and share the memo.
TEST(OracleMemo, ManyThreadsGetTheValuesTheirKeysName) {
  OracleMemo memo;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const int64_t k = (i * 7 + t) % 64;
        const Tensor v = memo.get<Tensor>(static_cast<uint64_t>(k), [&] { return unit(64, k, double(k)); });
        wrong += v[k] != double(k);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(memo.hits(), 8 * 2000 - 8 * 64);
}

// A memo shared by two backends' checks of a case (as a worker shares it) changes no
// verdict and no message, and the second backend finds the oracle's work.
TEST(OracleMemo, SharedAcrossBackendsChangesNoResult) {
  for (const Case& c : {test::small_conv(), test::small_conv(false)}) {
    OracleMemo memo;
    test::F32Direct first("first"), second("second"), alone("second");
    const CaseResult a = check_case(c, first, nullptr, &memo);
    const int64_t before = memo.hits();
    const CaseResult b = check_case(c, second, nullptr, &memo);
    const CaseResult solo = check_case(c, alone);
    EXPECT_GT(memo.hits(), before);
    ASSERT_EQ(b.checks.size(), solo.checks.size());
    for (size_t i = 0; i < b.checks.size(); ++i) {
      EXPECT_EQ(b.checks[i].disposition, solo.checks[i].disposition) << b.checks[i].name;
      EXPECT_EQ(b.checks[i].message, solo.checks[i].message) << b.checks[i].name;
      EXPECT_EQ(b.checks[i].max_error_ratio, solo.checks[i].max_error_ratio) << b.checks[i].name;
    }
    EXPECT_EQ(a.disposition, solo.disposition);
  }
}

}  // namespace
}  // namespace kc::checks
