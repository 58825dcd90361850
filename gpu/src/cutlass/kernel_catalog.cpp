// choose_kernel and known_refusal (kernel_catalog.h) over the kernels the dtype
// translation units list (kernel_entry.h).
#include "kernel_catalog.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kc::gpu::cutlass_engine {
namespace {

const char* element_name(Element e) { return e == Element::kBf16 ? "bf16" : e == Element::kF16 ? "f16" : "f32"; }
int element_bytes(Element e) { return e == Element::kF32 ? 4 : 2; }

}  // namespace

const std::vector<KernelEntry>& all_kernels() {
  static const std::vector<KernelEntry> all = [] {
    std::vector<KernelEntry> v = kernels_bf16();
    for (auto&& more : {kernels_f16(), kernels_f32()}) v.insert(v.end(), more.begin(), more.end());
    return v;
  }();
  return all;
}

std::string known_refusal(const ImplicitGemmProblem& p, Element e, ConvPass pass) {
  if (p.groups != 1) return "groups " + std::to_string(p.groups) + ": the engine's kernels take groups = 1";
  if (e != Element::kF32) {  // 128-bit accesses of 8 elements (f32 SIMT reads one at a time)
    if (p.c % 8 != 0) return "channels " + std::to_string(p.c) + " not a multiple of 8";
    if (p.k % 8 != 0) return "out_channels " + std::to_string(p.k) + " not a multiple of 8";
  }
  const bool strided = std::any_of(p.stride.begin(), p.stride.end(), [](int s) { return s > 1; });
  const bool dilated = std::any_of(p.dilation.begin(), p.dilation.end(), [](int d) { return d > 1; });
  if (pass == ConvPass::kDgrad && strided && dilated) return "backward data both strided and dilated";
  const int widest = *std::max_element(p.filter.begin(), p.filter.end());
  if (widest > 32) return "a filter of " + std::to_string(widest) + " taps in a dim (the optimized iterators take 32)";
  const int64_t in = int64_t{p.n} * p.c * p.in[0] * p.in[1] * p.in[2];
  const int64_t out = int64_t{p.n} * p.k * p.out[0] * p.out[1] * p.out[2];
  const int64_t w = int64_t{p.k} * p.c / p.groups * p.filter[0] * p.filter[1] * p.filter[2];
  const int64_t bytes = std::max({in, out, w}) * (pass == ConvPass::kWgrad ? 4 : element_bytes(e));
  if (bytes >= (int64_t{1} << 31)) return "a tensor of 2^31 bytes or more";
  return {};
}

Choice choose_kernel(const ImplicitGemmProblem& p, Element e, ConvPass pass, Epilogue epi, int sms) {
  std::vector<const KernelEntry*> kernels;
  for (const KernelEntry& k : all_kernels()) {
    if (k.pass == pass && k.element == e && k.epilogue == epi && k.rank == p.rank) kernels.push_back(&k);
  }
  Choice c;
  if (kernels.empty()) {
    c.why = std::string("no CUTLASS kernel in the catalog for this pass in ") + element_name(e);
    return c;
  }
  // The rule's tile first (from the catalog's large tile), in catalog order; the other
  // where none of those accepts.
  const auto large = std::find_if(kernels.begin(), kernels.end(), [](auto* k) { return k->tile == TileSize::kLarge; });
  const TileSize want = large == kernels.end()
                            ? TileSize::kSmall
                            : tile_for(implicit_gemm_extent(p, pass), {(*large)->tile_m, (*large)->tile_n}, sms);
  std::stable_partition(kernels.begin(), kernels.end(), [&](auto* k) { return k->tile == want; });
  std::string first;
  for (const KernelEntry* k : kernels) {
    const char* no = k->refusal(p);
    if (no == nullptr) {
      c.kernel = k;
      return c;
    }
    if (first.empty()) first = k->name + ": " + no;
  }
  const std::string ours = known_refusal(p, e, pass);
  c.why = ours.empty() ? first : ours + " (" + first + ")";
  return c;
}

}  // namespace kc::gpu::cutlass_engine
