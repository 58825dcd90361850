// Generators of input values with what kernels get wrong: NaN, infinities, signed
// zeros, subnormals, ties and near-ties (RapidCheck's own floating-point generators
// produce none of these). Every value is representable in its dtype (round_to(d, v)
// == v), as loaded tensors are, so inline data round-trips through YAML unchanged.
// Shrinking moves a value toward the ordinary kind and an ordinary value toward 0.
#include <cmath>
#include <limits>

#include "gen/gen.h"
#include "kc/dtype.h"
#include "pick.h"

namespace kc::gen {
namespace {

using detail::between;
using detail::pick;

int fraction_bits(DType t) {
  switch (t) {
    case DType::kF64:
      return 52;
    case DType::kF32:
      return 23;
    case DType::kF16:
      return 10;
    case DType::kBF16:
      return 7;
  }
  return 52;
}

double smallest_subnormal(DType t) { return std::ldexp(1.0, min_normal_exponent(t) - fraction_bits(t)); }

// The spacing of the dtype's values at |v| (for a step away from zero).
double ulp(DType t, double v) {
  if (v == 0.0) return smallest_subnormal(t);
  const int e = std::max(std::ilogb(v), min_normal_exponent(t));
  return std::ldexp(1.0, e - fraction_bits(t));
}

constexpr double kTies[] = {1.0, -1.0, 0.5, 0.0, 0.25};

rc::Gen<double> ordinary(DType t) {
  // k in [0, 2048] read as 0, -1, 1, -2, 2, ... over 1024: shrinks toward 0.
  return rc::gen::map(between(0, 2048), [t](int64_t k) {
    const double m = static_cast<double>(k % 2 ? -(k + 1) / 2 : k / 2);
    return round_to(t, m / 1024.0);
  });
}

rc::Gen<double> signed_zero() { return pick<double>({{1, 0.0}, {1, -0.0}}); }

rc::Gen<double> subnormal(DType t) {
  const int64_t top = (int64_t{1} << fraction_bits(t)) - 1;
  return rc::gen::apply(
      [t](bool negative, int64_t m) {
        const double v = static_cast<double>(m) * smallest_subnormal(t);
        return negative ? -v : v;
      },
      detail::flag(50), between(1, top));
}

rc::Gen<double> tie() {
  return pick<double>({{1, kTies[0]}, {1, kTies[1]}, {1, kTies[2]}, {1, kTies[3]}, {1, kTies[4]}});
}

// A nonzero tie value moved by 1 to 3 ulps, either way: windows whose maxima differ
// by less than a rounding error. (Next to 0 are the subnormals, a kind of their own.)
rc::Gen<double> near_tie(DType t) {
  const auto base = pick<double>({{1, kTies[0]}, {1, kTies[1]}, {1, kTies[2]}, {1, kTies[4]}});
  return rc::gen::apply(
      [t](double base, bool down, int64_t steps) {
        double v = base;
        for (int64_t i = 0; i < steps; ++i) {
          const double step = ulp(t, down ? std::nextafter(v, -INFINITY) : v);
          v = round_to(t, down ? v - step : v + step);
        }
        return v;
      },
      base, detail::flag(50), between(1, 3));
}

rc::Gen<double> of_kind(DType t, unsigned kind) {
  switch (kind) {
    case kSignedZero:
      return signed_zero();
    case kSubnormal:
      return subnormal(t);
    case kTie:
      return tie();
    case kNearTie:
      return near_tie(t);
    case kInfinity:
      return pick<double>({{1, INFINITY}, {1, -INFINITY}});
    case kNaN:
      return rc::gen::just(std::numeric_limits<double>::quiet_NaN());
    default:
      return ordinary(t);
  }
}

// The kinds of `kinds` in shrink order, with their weights.
std::vector<std::pair<uint64_t, unsigned>> weighted_kinds(unsigned kinds) {
  const std::pair<uint64_t, unsigned> all[] = {{6, kOrdinary}, {1, kSignedZero}, {1, kSubnormal}, {2, kTie},
                                               {2, kNearTie},  {1, kInfinity},   {1, kNaN}};
  std::vector<std::pair<uint64_t, unsigned>> r;
  for (const auto& k : all) {
    if (kinds & k.second) r.push_back(k);
  }
  return r;
}

}  // namespace

rc::Gen<double> data_value(DType dtype, unsigned kinds) {
  return rc::gen::mapcat(pick<unsigned>(weighted_kinds(kinds)), [dtype](unsigned k) { return of_kind(dtype, k); });
}

rc::Gen<Tensor> data_tensor(DType dtype, const Dims& shape, unsigned kinds) {
  const std::vector<std::pair<uint64_t, unsigned>> enabled = weighted_kinds(kinds);
  const size_t count = static_cast<size_t>(element_count(shape));
  // The palette: each enabled kind in or out (shrinking out); none in means the
  // first enabled kind alone.
  auto palette = rc::gen::container<std::vector<bool>>(enabled.size(), detail::flag(50));
  return rc::gen::mapcat(palette, [=](const std::vector<bool>& in) {
    unsigned chosen = 0;
    for (size_t i = 0; i < in.size(); ++i) chosen |= in[i] ? enabled[i].second : 0u;
    if (chosen == 0) chosen = enabled.front().second;
    return rc::gen::map(rc::gen::container<std::vector<double>>(count, data_value(dtype, chosen)),
                        [dtype, shape](std::vector<double> values) {
                          Tensor t;
                          t.dtype = dtype;
                          t.shape = shape;
                          t.data.assign(values.begin(), values.end());
                          return t;
                        });
  });
}

rc::Gen<Case> with_inline_x(const Case& c, unsigned kinds) {
  Dims shape = {c.input.batch, c.input.channels};
  shape.insert(shape.end(), c.input.spatial.begin(), c.input.spatial.end());
  return rc::gen::map(data_tensor(c.dtype, shape, kinds), [c](Tensor x) {
    Case r = c;
    r.tensors["x"] = std::move(x);
    return r;
  });
}

}  // namespace kc::gen
