// The boundary sweeps (see boundary_sweep.h). Each quantity is one function that sets
// that quantity to n on a minimal case of the op; the thresholds are where real kernels
// switch paths or their index arithmetic runs out of bits: vector widths, warps and tiles
// (2^3 to 2^8: 8, 16, 32, 64, 128, 256 and an 8-bit index), 12-bit tiles of a plane, and
// the 16-bit index widths (2^15 signed, 2^16 unsigned), to 2^17 in the implicit GEMM's M.
#include "gen/boundary_sweep.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "core/validate.h"
#include "gen/op_fields.h"
#include "gen/oracle_trust.h"
#include "gen/sweep_quantities.h"
#include "kc/backend.h"
#include "ops/op_module.h"

namespace kc::gen {

using detail::Quantity;

namespace {

const std::vector<int> kSmall = {3, 4, 5, 6, 7, 8};  // counts: batch, channels, taps, extents
// Planes and volumes are read through 2-tap windows side by side (stride 2), so that a
// check costs about one pass over the input: a 3-tap window with padding costs 9 (27 in
// 3-D) and made these cases most of the trap zoo's time.
const std::vector<int> kLarge = {8, 12, 15, 16};                // elements per plane or volume, outputs per plane
const std::vector<int> kLine = {3, 4, 5, 6, 7, 8, 12, 15, 16};  // a 1-D extent is its plane
const std::vector<int> kGemmM = {8, 12, 15, 16, 17};

// The window of a case: its input extents, kernel, stride and symmetric padding.
struct Geometry {
  Dims spatial, kernel, stride;
  int64_t pad = 0;
};

Geometry line(int64_t extent) { return {{extent}, {3}, {1}, 1}; }

// A 2-tap window, or 1 where the extent is 1 (a prime count factors as 1 x n).
int64_t two(int64_t extent) { return std::min<int64_t>(2, extent); }

PadSpec pads(int64_t pad, size_t rank) {
  return {PadKind::kExplicit, std::vector<std::array<int64_t, 2>>(rank, {pad, pad})};
}

void place(Case& c, const Geometry& g) {
  c.input.spatial = g.spatial;
  const detail::WindowRef w = detail::window_of(c);
  w.kernel = g.kernel;
  w.stride = g.stride;
  w.padding = pads(g.pad, g.spatial.size());
}

// Input channels, output channels and groups (a pool has no output channels or groups).
void set_channels(Case& c, int64_t in, int64_t out, int64_t groups) {
  c.input.channels = in;
  if (ConvParams* p = detail::conv_of(c)) {
    p->out_channels = out;
    p->groups = groups;
  }
}

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::max<int64_t>(1, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// The quantities every op has: batch, extents, planes and volumes, window taps, outputs.
std::vector<Quantity> common_quantities() {
  return {
      {{"batch", kSmall}, [](Case& c, int64_t n) { c.input.batch = n; }},
      {{"extent (1-D)", kLine}, [](Case& c, int64_t n) { place(c, line(n)); }},
      {{"height (2-D)", kSmall},
       [](Case& c, int64_t n) {
         place(c, {{n, 3}, {3, 3}, {1, 1}, 1});
       }},
      {{"width (2-D)", kSmall},
       [](Case& c, int64_t n) {
         place(c, {{3, n}, {3, 3}, {1, 1}, 1});
       }},
      {{"depth (3-D)", kSmall},
       [](Case& c, int64_t n) {
         place(c, {{n, 3, 3}, {3, 3, 3}, {1, 1, 1}, 1});
       }},
      {{"elements per plane (2-D)", kLarge},
       [](Case& c, int64_t n) {
         const auto [h, w] = near_square_factors(n);
         place(c, {{h, w}, {two(h), two(w)}, {2, 2}, 0});
       }},
      {{"elements per volume (3-D)", kLarge},
       [](Case& c, int64_t n) {
         const auto [d, h, w] = near_cube_factors(n);
         place(c, {{d, h, w}, {two(d), two(h), two(w)}, {2, 2, 2}, 0});
       }},
      // Two windows side by side per dim: overlapping wide windows share one maximum.
      {{"window taps (1-D)", kSmall},
       [](Case& c, int64_t n) {
         place(c, {{2 * n}, {n}, {n}, 0});
       }},
      {{"window taps (2-D)", kSmall},
       [](Case& c, int64_t n) {
         const auto [a, b] = near_square_factors(n);
         place(c, {{2 * a, 2 * b}, {a, b}, {a, b}, 0});
       }},
      {{"outputs per plane (2-D)", kLarge},
       [](Case& c, int64_t n) {  // k2 s1 on o + 1 gives o outputs
         const auto [h, w] = near_square_factors(n);
         place(c, {{h + 1, w + 1}, {2, 2}, {1, 1}, 0});
       }},
  };
}

}  // namespace

namespace detail {

std::vector<Quantity> conv_quantities() {
  std::vector<Quantity> qs = common_quantities();
  qs.push_back({{"channels per group (2 groups)", kSmall}, [](Case& c, int64_t n) { set_channels(c, 2 * n, 2, 2); }});
  qs.push_back({{"output channels", kSmall}, [](Case& c, int64_t n) { set_channels(c, 1, n, 1); }});
  qs.push_back({{"implicit GEMM M (batch x outputs)", kGemmM}, [](Case& c, int64_t n) {
                  const int64_t b = largest_divisor_at_most(n, 8);
                  c.input.batch = b;
                  place(c, line(n / b));
                }});
  qs.push_back({{"implicit GEMM K (channels x taps)", kSmall}, [](Case& c, int64_t n) {
                  int64_t taps = 1;
                  for (int64_t t : {9, 7, 5, 3}) {
                    if (n % t == 0 && taps == 1) taps = t;
                  }
                  set_channels(c, n / taps, 1, 1);
                  place(c, {{4}, {taps}, {1}, taps / 2});
                }});
  return qs;
}

std::vector<Quantity> pool_quantities() {
  std::vector<Quantity> qs = common_quantities();
  qs.push_back({{"channels", kSmall}, [](Case& c, int64_t n) { set_channels(c, n, 0, 1); }});
  return qs;
}

const std::vector<int>& small_counts() { return kSmall; }

}  // namespace detail

namespace {

// The minimal case of an op: one sample, one channel, a line of 4 under a 3-tap window
// (padded by 1, so a stack keeps its extent), and the checks a size can break; the op's
// module makes its own fields minimal and adds or drops checks (argmax on a max pool).
Case minimal_case(OpParams op) {
  Case c;
  c.op = std::move(op);
  c.input = {1, 1, {4}};
  c.checks = {"shape", "forward", "backward", "integrity"};
  std::visit([&](auto& p) { detail::make_minimal(c, p); }, c.op);
  place(c, line(4));
  return c;
}

// A stable seed from the case's name (FNV-1a), so that a name keeps its data.
uint64_t seed_of(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ULL;
  return h % 1000000;
}

std::string threshold_name(int k, int offset) {
  return "2^" + std::to_string(k) + (offset < 0 ? "-1" : offset > 0 ? "+1" : "");
}

bool judges(const Case& c, Backend& oracle) { return validate(c).ok() && mistrusted_on_oracle(c, oracle).empty(); }

// The case with data that can judge a kernel: as drawn; else integers with exact sums (a
// sum of 2^16 random terms cancels below its rounding bound, so a kernel writing zeros
// would pass); else the same in f64. The last as drawn where none can.
Case judging(Case c, Backend& oracle) {
  if (Status s = validate(c); !s.ok()) throw std::logic_error("boundary sweep: " + c.name + ": " + s.message());
  c = steer_seed(std::move(c));
  if (judges(c, oracle)) return c;
  Case exact = c;
  exact.data.fill = Fill::kInteger;
  exact.tolerance.kind = ToleranceKind::kExact;
  if (judges(exact, oracle)) return exact;
  exact.dtype = DType::kF64;
  return judges(exact, oracle) ? exact : c;
}

// The sweep's cases of one op as drawn (data not yet steered), in the sweep's order.
std::vector<Case> shapes_of(const OpParams& op) {
  static constexpr DType kDtypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64};
  std::vector<Case> out;
  size_t turn = 0;
  for (const Quantity& q : std::visit([](const auto& p) { return detail::sweep_quantities(p); }, op)) {
    for (int k : q.q.powers) {
      const DType dtype = kDtypes[turn++ % 4];
      for (int offset : {-1, 0, 1}) {
        const int64_t n = (int64_t{1} << k) + offset;
        Case c = minimal_case(op);
        c.dtype = dtype;
        q.apply(c, n);
        c.name = std::string(op_name(op)) + " " + std::string(dtype_name(dtype)) + ": " + q.q.name + " " +
                 threshold_name(k, offset) + " = " + std::to_string(n);
        c.data.seed = seed_of(c.name);
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

std::vector<Case> sweep_of(const OpParams& op, Backend& oracle) {
  std::vector<Case> out = shapes_of(op);
  for (Case& c : out) {
    const DType dtype = c.dtype;
    c = judging(std::move(c), oracle);
    if (c.dtype != dtype) c.name.replace(c.name.find(dtype_name(dtype)), dtype_name(dtype).size(), "f64");
  }
  return out;
}

}  // namespace

std::array<int64_t, 2> near_square_factors(int64_t n) {
  int64_t a = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (a * a > n) --a;
  while (a > 1 && n % a != 0) --a;
  return {a, n / a};
}

std::array<int64_t, 3> near_cube_factors(int64_t n) {
  int64_t a = static_cast<int64_t>(std::cbrt(static_cast<double>(n))) + 1;
  while (a * a * a > n) --a;
  while (a > 1 && n % a != 0) --a;
  const auto [b, c] = near_square_factors(n / a);
  return {a, b, c};
}

std::vector<BoundaryQuantity> boundary_quantities(const OpParams& op) {
  std::vector<BoundaryQuantity> out;
  for (const Quantity& q : std::visit([](const auto& p) { return detail::sweep_quantities(p); }, op))
    out.push_back(q.q);
  return out;
}

std::vector<Case> boundary_shapes(const OpSet& ops) {
  std::vector<Case> out;
  for (const OpParams& op : ops.only ? std::vector<OpParams>{*ops.only} : all_ops()) {
    std::vector<Case> part = shapes_of(op);
    out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return out;
}

std::vector<Case> boundary_sweep(const OpSet& ops) {
  const std::vector<OpParams> list = ops.only ? std::vector<OpParams>{*ops.only} : all_ops();
  auto oracle = make_reference_as_candidate("oracle (as a candidate)");
  std::vector<Case> out;
  for (const OpParams& op : list) {
    std::vector<Case> part = sweep_of(op, *oracle);
    out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return out;
}

}  // namespace kc::gen
