// Exact conversions between f64 host values and oneDNN's f32, bf16 and f16 buffers.
// bf16 and f16 are written bit by bit: an input value is representable, so taking its
// float's bits (bf16: the high half; f16: re-biased exponent) loses nothing.
#include "onednn_memory.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace kc::onednn {
namespace {

uint32_t float_bits(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Exact for representable values; a NaN keeps its sign and stays quiet.
uint16_t bf16_bits(float f) { return static_cast<uint16_t>(float_bits(f) >> 16); }
float bf16_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

uint16_t f16_bits(float f) {
  const uint16_t sign = static_cast<uint16_t>((float_bits(f) >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7E00u;
  if (std::isinf(f)) return sign | 0x7C00u;
  if (a < 0x1p-14f) return sign | static_cast<uint16_t>(a * 0x1p24f);  // subnormal: a multiple of 2^-24
  const uint32_t u = float_bits(a);
  const uint32_t exponent = ((u >> 23) & 0xFFu) - 127 + 15;
  return sign | static_cast<uint16_t>((exponent << 10) | ((u >> 13) & 0x3FFu));
}

float f16_float(uint16_t h) {
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  const uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return mantissa ? std::nanf("") : sign * INFINITY;
  if (exponent == 0) return sign * static_cast<float>(mantissa) * 0x1p-24f;
  return sign * std::ldexp(1.0f + static_cast<float>(mantissa) * 0x1p-10f, static_cast<int>(exponent) - 15);
}

void write_values(const Tensor& t, memory::data_type type, void* dst) {
  const size_t n = t.data.size();
  if (type == memory::data_type::f32) {
    auto* p = static_cast<float*>(dst);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(t.data[i]);
    return;
  }
  auto* p = static_cast<uint16_t*>(dst);
  const bool bf16 = type == memory::data_type::bf16;
  for (size_t i = 0; i < n; ++i) {
    const float f = static_cast<float>(t.data[i]);
    p[i] = bf16 ? bf16_bits(f) : f16_bits(f);
  }
}

void read_values(const void* src, memory::data_type type, Tensor& out) {
  const size_t n = out.data.size();
  if (type == memory::data_type::f32) {
    const auto* p = static_cast<const float*>(src);
    for (size_t i = 0; i < n; ++i) out.data[i] = p[i];
    return;
  }
  const auto* p = static_cast<const uint16_t*>(src);
  const bool bf16 = type == memory::data_type::bf16;
  for (size_t i = 0; i < n; ++i) out.data[i] = bf16 ? bf16_float(p[i]) : f16_float(p[i]);
}

}  // namespace

std::optional<memory::data_type> data_type(DType t) {
  switch (t) {
    case DType::kF32:
      return memory::data_type::f32;
    case DType::kBF16:
      return memory::data_type::bf16;
    case DType::kF16:
      return memory::data_type::f16;
    case DType::kF64:
      break;
  }
  return std::nullopt;
}

memory::dims to_dims(const Dims& d) { return memory::dims(d.begin(), d.end()); }

memory::format_tag plain_tag(size_t ndims) {
  using tag = memory::format_tag;
  static constexpr tag kTags[] = {tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde, tag::abcdef};
  if (ndims < 1 || ndims > 6) throw std::invalid_argument("no plain oneDNN layout of that rank");
  return kTags[ndims - 1];
}

memory::desc plain_desc(const memory::dims& dims, memory::data_type t) { return {dims, t, plain_tag(dims.size())}; }

memory reordered(Context& ctx, memory m, const memory::desc& want) {
  if (m.get_desc() == want) return m;
  memory out(want, ctx.engine);
  dnnl::reorder(m, out).execute(ctx.stream, m, out);
  ctx.stream.wait();
  return out;
}

memory to_plain(Context& ctx, const memory& m) {
  const memory::desc d = m.get_desc();
  return reordered(ctx, m, plain_desc(d.dims(), d.data_type()));
}

memory from_tensor(Context& ctx, const Tensor& t, const memory::dims& dims, const memory::desc& want) {
  memory plain(plain_desc(dims, want.data_type()), ctx.engine);
  if (plain.get_desc().get_size() / memory::data_type_size(want.data_type()) != t.data.size())
    throw std::invalid_argument("a tensor of " + std::to_string(t.data.size()) +
                                " elements for oneDNN dims of another count");
  write_values(t, want.data_type(), plain.get_data_handle());
  return reordered(ctx, plain, want);
}

void to_tensor(Context& ctx, const memory& m, DType dtype, Tensor& out) {
  const memory plain = to_plain(ctx, m);
  const memory::desc d = plain.get_desc();
  if (d.get_size() / memory::data_type_size(d.data_type()) != out.data.size())
    throw std::invalid_argument("a oneDNN result of another element count than its output tensor");
  read_values(plain.get_data_handle(), d.data_type(), out);
  out.dtype = dtype;
}

}  // namespace kc::onednn
