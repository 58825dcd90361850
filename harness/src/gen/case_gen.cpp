// Generators of valid cases: the mix of ops or one op's generator (its module's
// `op_case`, ops/<op>/<op>_gen.cpp), and what they all draw (gen/case_draft.h). A draft
// is drawn field by field (gen::build, one generator per field, so RapidCheck shrinks
// each on its own), realised as a Case. Field order is shrink order: the window (sizes)
// first, then batch and channels, then the dtype and the data; a stack's depth comes
// before its window. Options list the simplest choice first (pick.h), which is where a
// shrink lands: f64, fill random, no inline data, zeros padding mode, no pool,
// checkpoint none.
#include <algorithm>
#include <string_view>
#include <variant>

#include "gen/case_draft.h"
#include "gen/gen.h"
#include "ops/op_module.h"
#include "pick.h"

namespace kc::gen {
namespace detail {
namespace {

using rc::gen::just;
using rc::gen::set;

Caps widened(Caps c) {
  c.channels_per_group = c.wide_channels_per_group;
  c.groups = std::min<int64_t>(c.groups, 2);
  c.batch = std::min<int64_t>(c.batch, 2);
  c.extent[0] *= c.wide_extent_factor;
  c.extent[1] *= c.wide_extent_factor;
  return c;
}

Caps aligned(Caps c) {
  c.channel_multiple = 8;
  c.channels_per_group = 4;  // 8 to 32
  c.groups = 1;
  c.depthwise_percent = 0;
  c.batch = std::min<int64_t>(c.batch, 2);
  return c;
}

uint64_t percent(int64_t p) { return static_cast<uint64_t>(std::clamp<int64_t>(p, 0, 100)); }

enum class SizeMode { kUsual, kAligned, kThreshold, kWide };

}  // namespace

rc::Gen<Sized> sized(const Options& o) {
  const uint64_t wide = percent(o.caps.wide_percent), threshold = percent(o.caps.threshold_percent);
  const uint64_t align = percent(o.caps.aligned_percent);
  const uint64_t usual = wide + threshold + align < 100 ? 100 - wide - threshold - align : 0;
  // Aligned draws come out of the usual ones: a draw that was threshold or wide still is.
  const auto mode = pick<SizeMode>({{usual, SizeMode::kUsual},
                                    {align, SizeMode::kAligned},
                                    {threshold, SizeMode::kThreshold},
                                    {wide, SizeMode::kWide}});
  return rc::gen::map(mode, [o](SizeMode m) {
    Sized r{o, m == SizeMode::kThreshold};
    if (m == SizeMode::kWide) r.o.caps = widened(o.caps);
    if (m == SizeMode::kAligned) r.o.caps = aligned(o.caps);
    if (m == SizeMode::kThreshold) r.o.caps = detail::threshold_caps(o.caps);
    return r;
  });
}

rc::Gen<DType> dtype_gen() {
  return pick<DType>({{1, DType::kF64}, {1, DType::kF32}, {1, DType::kF16}, {1, DType::kBF16}});
}

// conv_bias_relu's relu(-inf) = 0 is judged as exactly 0 (judge/tolerance.h).
rc::Gen<DataDraft> data_draft(bool pool, const Options& o) {
  std::vector<std::pair<uint64_t, Fill>> fills = {
      {4, Fill::kRandom}, {2, Fill::kNormal}, {3, Fill::kInteger}, {pool ? 3u : 1u, Fill::kTies}};
  if (o.data & (kNaN | kInfinity)) fills.push_back({1, Fill::kSpecial}), fills.push_back({1, Fill::kBoundary});
  return rc::gen::build<DataDraft>(
      set(&DataDraft::fill, pick<Fill>(fills)), set(&DataDraft::seed, rc::gen::arbitrary<uint64_t>()),
      set(&DataDraft::exact, flag(50)), set(&DataDraft::inline_x, o.data != 0 ? flag(pool ? 30 : 12) : just(false)),
      set(&DataDraft::zero, detail::zero_draft(static_cast<uint64_t>(o.caps.zero_percent))),
      set(&DataDraft::deterministic, flag(20)));
}

void apply_data(const DataDraft& d, Case& c) {
  c.data = DataSpec{d.seed, d.fill, {}};
  c.deterministic = d.deterministic;  // every output bitwise repeatable: determinism and state demand it
  if (d.fill == Fill::kInteger && d.exact) c.tolerance.kind = ToleranceKind::kExact;
}

Case steered(Case c) { return steer_seed(std::move(c)); }

rc::Gen<Case> finish(Case c, const DataDraft& d, unsigned kinds, bool steer) {
  auto complete = [zero = d.zero, steer](Case r) {
    r.data.zero = detail::realise_zero(zero, r);
    return steer ? steered(std::move(r)) : r;
  };
  if (!d.inline_x || d.fill == Fill::kInteger || kinds == 0) return just(complete(std::move(c)));
  return rc::gen::map(with_inline_x(c, kinds), complete);
}

}  // namespace detail

rc::Gen<Case> valid_case(const OpSet& ops, const Options& options) {
  if (!ops.only) {  // the mix (see OpSet)
    return rc::gen::mapcat(
        detail::pick<OpSet>({{2, only<ConvParams>()}, {1, only<MaxPoolParams>()}, {1, only<ConvBiasReluParams>()}}),
        [options](const OpSet& op) { return valid_case(op, options); });
  }
  return std::visit([&](const auto& op) { return op_case(options, op); }, *ops.only);
}

std::optional<OpSet> parse_op_set(std::string_view name) {
  if (name == "all") return kAllOps;
  if (std::optional<OpParams> op = op_named(name)) return OpSet{*op};
  return std::nullopt;
}

std::string_view op_set_name(const OpSet& ops) { return ops.only ? op_name(*ops.only) : "all"; }

std::string op_set_names() { return op_name_list(", ") + " or all"; }

}  // namespace kc::gen
