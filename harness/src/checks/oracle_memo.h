// OracleMemo: what the oracle alone computed for a case (f64, deterministic: the same
// inputs give the same bits), kept while a worker checks that case on each of its
// backends, so that the next backend's checks find it instead of computing it again
// (docs/architecture.md, "Data flow"). A value is found by a key that digests its kind
// and everything it was computed from. Each value is kept with a digest of its own
// bytes, checked on every find: a backend that writes where it should not makes the
// memo compute the value again, never hands a check a changed one. A byte budget bounds
// the memory; past it, values are computed and not kept.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/invoke.h"
#include "kc/tensor.h"

namespace kc::checks {

// A 64-bit digest of what it is given, in order.
class MemoKey {
 public:
  explicit MemoKey(std::string_view kind);
  MemoKey& add(const Tensor& t);
  MemoKey& add(const IndexTensor& t);
  MemoKey& add(const std::vector<bool>& bits);
  MemoKey& add(int64_t v);
  MemoKey& add(double v);
  uint64_t value() const { return h_; }

 private:
  void mix(uint64_t v);
  void mix_bytes(const void* data, size_t bytes);
  uint64_t h_ = 0x6b636865636b2121ull;
};

// What the memo needs of a tensor and of an op's outputs (declared before the
// memo, whose templates look them up).
uint64_t memo_digest(const Tensor& t);
size_t memo_bytes(const Tensor& t);
uint64_t memo_digest(const OpOutputs& o);  // the tensors, indices and statuses
size_t memo_bytes(const OpOutputs& o);

class OracleMemo {
 public:
  explicit OracleMemo(size_t budget_bytes = size_t{256} << 20) : budget_(budget_bytes) {}

  // A copy of the value under `key`, or make()'s, kept when the budget allows. T needs
  // memo_digest(const T&) and memo_bytes(const T&). Safe to call from the threads of a
  // check's parallel probes; make() runs outside the lock.
  template <class T, class Make>
  T get(uint64_t key, Make&& make) {
    {
      const std::lock_guard<std::mutex> hold(mu_);
      if (const T* v = find<T>(key)) return *v;
    }
    T v = make();
    const std::lock_guard<std::mutex> hold(mu_);
    keep(key, v);
    return v;
  }

  size_t bytes() const {
    const std::lock_guard<std::mutex> hold(mu_);
    return used_;
  }
  int64_t hits() const {
    const std::lock_guard<std::mutex> hold(mu_);
    return hits_;
  }

 private:
  struct Entry {
    std::type_index type;
    std::shared_ptr<const void> value;
    uint64_t digest;
    size_t bytes;
  };

  template <class T>
  const T* find(uint64_t key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    const T* v = it->second.type == typeid(T) ? static_cast<const T*>(it->second.value.get()) : nullptr;
    if (v == nullptr || memo_digest(*v) != it->second.digest) {  // changed since kept: computed again
      used_ -= it->second.bytes;
      entries_.erase(it);
      return nullptr;
    }
    ++hits_;
    return v;
  }

  template <class T>
  void keep(uint64_t key, const T& v) {
    const size_t bytes = memo_bytes(v) + 64;
    if (used_ + bytes > budget_ || entries_.count(key) != 0) return;
    entries_.emplace(key, Entry{typeid(T), std::make_shared<const T>(v), memo_digest(v), bytes});
    used_ += bytes;
  }

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Entry> entries_;
  size_t used_ = 0, budget_;
  int64_t hits_ = 0;
};

// The oracle on `in` and its absolute pass (judge/absolute_pass.h: absolute_pass, before
// absolute_pass_for spreads it for a backend): from the memo, or computed and kept there
// (null memo: computed).
struct OracleRun {
  OpOutputs ref, abs;
};
OracleRun oracle_run(OracleMemo* memo, const Case& c, const OpGeometry& g, const OpInputs& in);

}  // namespace kc::checks
