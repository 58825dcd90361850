// OracleMemo's digests (oracle_memo.h): shapes and bytes, mixed in order, word by word.
// Every word goes through a multiply, a rotation and a shift, so that a change in any bit
// reaches every bit of the digest: inputs that differ only in a few high bits (a unit
// cotangent 1.0 at one position or another, a sign) must not collide, as they would in a
// hash whose multiplies only carry bits upward (kc::digest_bytes, made for change detection).
#include "checks/oracle_memo.h"

#include <cstring>

#include "judge/absolute_pass.h"

namespace kc::checks {

MemoKey::MemoKey(std::string_view kind) { mix_bytes(kind.data(), kind.size()); }

void MemoKey::mix(uint64_t v) {
  h_ ^= v * 0x87c37b91114253d5ull;
  h_ = (h_ << 31 | h_ >> 33) * 0x4cf5ad432745937full;
  h_ ^= h_ >> 29;
}

// Four lanes of 8-byte words, each mixed as mix() does, so that the multiplies of
// neighbouring words overlap; the lanes then go into the digest one after another.
void MemoKey::mix_bytes(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  if (bytes >= 32) {
    uint64_t lane[4] = {h_, h_ ^ 0x9e3779b97f4a7c15ull, h_ ^ 0xbf58476d1ce4e5b9ull, h_ ^ 0x94d049bb133111ebull};
    for (; i + 32 <= bytes; i += 32) {
      for (int l = 0; l < 4; ++l) {
        uint64_t w = 0;
        std::memcpy(&w, p + i + 8 * l, 8);
        uint64_t& h = lane[l];
        h ^= w * 0x87c37b91114253d5ull;
        h = (h << 31 | h >> 33) * 0x4cf5ad432745937full;
        h ^= h >> 29;
      }
    }
    for (uint64_t v : lane) mix(v);
  }
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, bytes - i);
  mix(tail ^ static_cast<uint64_t>(bytes));
}

MemoKey& MemoKey::add(int64_t v) {
  mix(static_cast<uint64_t>(v));
  return *this;
}

MemoKey& MemoKey::add(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  mix(bits);
  return *this;
}

MemoKey& MemoKey::add(const Tensor& t) {
  add(static_cast<int64_t>(t.dtype)).add(static_cast<int64_t>(t.shape.size()));
  for (int64_t d : t.shape) add(d);
  mix_bytes(t.data.data(), t.data.size() * sizeof(double));
  return *this;
}

MemoKey& MemoKey::add(const IndexTensor& t) {
  add(static_cast<int64_t>(t.shape.size()));
  for (int64_t d : t.shape) add(d);
  mix_bytes(t.data.data(), t.data.size() * sizeof(int64_t));
  return *this;
}

MemoKey& MemoKey::add(const std::vector<bool>& bits) {
  add(static_cast<int64_t>(bits.size()));
  uint64_t word = 0;
  for (size_t i = 0; i < bits.size(); ++i) {
    word = (word << 1) | static_cast<uint64_t>(bits[i]);
    if (i % 64 == 63) mix(word);
  }
  mix(word);
  return *this;
}

uint64_t memo_digest(const Tensor& t) { return MemoKey("tensor").add(t).value(); }
size_t memo_bytes(const Tensor& t) { return t.data.size() * sizeof(double); }

uint64_t memo_digest(const OpOutputs& o) {
  MemoKey k("outputs");
  k.add(o.y).add(o.dx).add(o.dw).add(o.db).add(static_cast<int64_t>(o.ran_backward));
  k.add(static_cast<int64_t>(o.forward.ok())).add(static_cast<int64_t>(o.backward.ok()));
  if (o.indices) k.add(*o.indices);
  return k.value();
}

size_t memo_bytes(const OpOutputs& o) {
  return (o.y.data.size() + o.dx.data.size() + o.dw.data.size() + o.db.data.size() +
          (o.indices ? o.indices->data.size() : 0)) *
         sizeof(double);
}

OracleRun oracle_run(OracleMemo* memo, const Case& c, const OpGeometry& g, const OpInputs& in) {
  auto run = [&] { return invoke(*make_reference_backend(), c, g, in); };
  if (memo == nullptr) {
    OracleRun o{run(), {}};
    o.abs = absolute_pass(c, g, in, o.ref);
    return o;
  }
  const uint64_t key = MemoKey("oracle").add(in.x).add(in.w).add(in.b).add(in.dy).value();
  OracleRun o{memo->get<OpOutputs>(key, run), {}};
  o.abs = memo->get<OpOutputs>(MemoKey("oracle.abs").add(static_cast<int64_t>(key)).value(),
                               [&] { return absolute_pass(c, g, in, o.ref); });
  return o;
}

}  // namespace kc::checks
