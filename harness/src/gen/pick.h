// Internal to the generators: a weighted choice that SHRINKS toward the first option.
// RapidCheck's gen::element and gen::weightedElement never shrink, so an enum drawn
// with them would stay wherever it was generated; here the options are listed simplest
// first (f64 before f16, zeros before reflect) and a failing case moves toward them.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <rapidcheck.h>

namespace kc::gen::detail {

template <class T>
rc::Gen<T> pick(std::vector<std::pair<uint64_t, T>> options) {
  return [options](const rc::Random& random, int) {
    uint64_t total = 0;
    for (const auto& o : options) total += o.first;
    uint64_t r = rc::Random(random).next() % total;
    size_t i = 0;
    while (r >= options[i].first) r -= options[i++].first;
    // Shrinks try every earlier option, simplest first (lists are short).
    return rc::shrinkable::map(rc::shrinkable::shrinkRecur(i, [](size_t x) { return rc::seq::range<size_t>(0, x); }),
                               [options](size_t x) { return options[x].second; });
  };
}

// false, shrinking to false; true about `percent_true` in 100 times.
inline rc::Gen<bool> flag(uint64_t percent_true) {
  return pick<bool>({{100 - percent_true, false}, {percent_true, true}});
}

// An integer in [lo, hi], shrinking toward lo. Unlike gen::inRange it does not
// narrow with the RapidCheck size: the caps alone bound it.
inline rc::Gen<int64_t> between(int64_t lo, int64_t hi) {
  return [lo, hi](const rc::Random& random, int) {
    const int64_t v = lo + static_cast<int64_t>(rc::Random(random).next() % static_cast<uint64_t>(hi - lo + 1));
    return rc::shrinkable::shrinkRecur(v, [lo](int64_t x) { return rc::shrink::towards<int64_t>(x, lo); });
  };
}

}  // namespace kc::gen::detail
