// The padding-mode maps of the pre-pad and fold kernels (kc/gpu/pad_map.h): the source
// of every padded position against the reference's, and the inverse (the padded
// positions that copy an input element) against brute force, for every mode and every
// padding the contract allows on small extents.
#include <gtest/gtest.h>

#include <vector>

#include "kc/gpu/pad_map.h"
#include "kc/ref/pad.h"

namespace kc {
namespace {

struct ModePair {
  PaddingMode ref;
  gpu::PadMode gpu;
};

const ModePair kModes[] = {{PaddingMode::kZeros, gpu::PadMode::kZeros},
                           {PaddingMode::kReflect, gpu::PadMode::kReflect},
                           {PaddingMode::kReplicate, gpu::PadMode::kReplicate},
                           {PaddingMode::kCircular, gpu::PadMode::kCircular}};

// Paddings the contract accepts: reflect needs pad < in, circular pad <= in.
bool allowed(PaddingMode mode, int in, int pad) {
  if (mode == PaddingMode::kReflect) return pad < in;
  if (mode == PaddingMode::kCircular) return pad <= in;
  return true;
}

template <class F>
void for_each_dim(F f) {
  for (const ModePair& m : kModes) {
    for (int in = 1; in <= 6; ++in) {
      for (int lo = 0; lo <= 7; ++lo) {
        for (int hi = 0; hi <= 7; ++hi) {
          if (allowed(m.ref, in, lo) && allowed(m.ref, in, hi)) f(m, in, lo, hi);
        }
      }
    }
  }
}

TEST(GpuPadMap, SourceMatchesTheReference) {
  for_each_dim([](const ModePair& m, int in, int lo, int hi) {
    DimGeometry d;
    d.in = in;
    d.pad_lo = lo;
    d.pad_hi = hi;
    for (int p = 0; p < in + lo + hi; ++p) {
      ASSERT_EQ(gpu::pad_source(m.gpu, p, in, lo), ref::pad_source(p, d, m.ref))
          << padding_mode_name(m.ref) << " in " << in << " lo " << lo << " hi " << hi << " p " << p;
    }
  });
}

TEST(GpuPadMap, CopiesOfAnInputAreTheInverseInAscendingOrder) {
  for_each_dim([](const ModePair& m, int in, int lo, int hi) {
    const int padded = in + lo + hi;
    for (int i = 0; i < in; ++i) {
      std::vector<int> want, got;
      for (int p = 0; p < padded; ++p) {
        if (gpu::pad_source(m.gpu, p, in, lo) == i) want.push_back(p);
      }
      const gpu::PadRanges r = gpu::pad_copies_of(m.gpu, i, in, lo, padded);
      ASSERT_LE(r.count, 3);
      for (int a = 0; a < r.count; ++a) {
        for (int p = r.begin[a]; p < r.end[a]; ++p) got.push_back(p);
      }
      ASSERT_EQ(got, want) << padding_mode_name(m.ref) << " in " << in << " lo " << lo << " hi " << hi << " i " << i;
    }
  });
}

}  // namespace
}  // namespace kc
