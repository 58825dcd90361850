// Driving generators outside a property: case `index` of a run from (seed, index)
// alone, so that a run can be split between processes and replayed; and the shrink
// loop of RapidCheck (first shrink that still fails, repeat), with a deadline and a
// predicate that may run the candidate anywhere (a worker process, a GPU).
#include <rapidcheck.h>

#include "gen/gen.h"

namespace kc::gen {
namespace {

uint64_t mix(uint64_t z) {  // splitmix64's finaliser: spreads (seed, index) over 64 bits
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

int generation_size(uint64_t seed, uint64_t index) { return 40 + static_cast<int>(mix(mix(seed) ^ ~index) % 61); }

rc::Random random_for(uint64_t seed, uint64_t index) { return rc::Random(mix(mix(seed) + index)); }

ShrinkOutcome shrink_case(const rc::Shrinkable<Case>& root, const std::function<bool(const Case&)>& still_fails,
                          std::chrono::steady_clock::time_point deadline) {
  rc::Shrinkable<Case> current = root;
  ShrinkOutcome out{root.value()};
  for (bool progressed = true; progressed;) {
    progressed = false;
    rc::Seq<rc::Shrinkable<Case>> shrinks = current.shrinks();
    while (rc::Maybe<rc::Shrinkable<Case>> next = shrinks.next()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        out.out_of_time = true;
        return out;
      }
      Case candidate = next->value();
      if (candidate == out.smallest) {  // a drawn field the case does not use: free
        current = *next;
        progressed = true;
        break;
      }
      ++out.tried;
      if (still_fails(candidate)) {
        current = *next;
        out.smallest = std::move(candidate);
        ++out.steps;
        progressed = true;
        break;
      }
    }
  }
  return out;
}

}  // namespace kc::gen
