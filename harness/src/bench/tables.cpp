#include "bench/tables.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kc::bench {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string ms(double s) { return fmt("%.3f", s * 1e3); }
std::string mib(double b) { return b < 0 ? "-" : fmt("%.2f", b / (1024.0 * 1024.0)); }
std::string ratio(double a, double b) { return b > 0 ? fmt("%.2f", a / b) : "-"; }

bool timed(const BenchEntry& e) { return e.error.empty() && e.stats.median > 0.0; }

// The timed entry of a backend, op and mode with a geometry, or null.
const BenchEntry* find(const std::vector<BenchEntry>& all, const BenchEntry& like, const std::string& op,
                       const std::string& geometry) {
  for (const BenchEntry& e : all) {
    if (timed(e) && e.backend == like.backend && e.mode == like.mode && e.op == op && e.geometry == geometry) return &e;
  }
  return nullptr;
}

Table checkpoint_table(const std::vector<BenchEntry>& all) {
  Table t{"checkpoint",
          "Stack training step per checkpoint policy: activation memory saved against recompute time",
          "time and memory relative to the same backend's step without checkpointing",
          {"case", "backend", "policy", "step ms", "time / none", "activations MiB", "memory / none", "recomputed"}};
  std::map<std::string, const BenchEntry*> none;
  for (const BenchEntry& e : all)
    if (timed(e) && e.op == "stack_step[none]") none[e.case_name + "/" + e.backend] = &e;
  for (const BenchEntry& e : all) {
    if (!timed(e) || e.op.rfind("stack_step[", 0) != 0) continue;
    const BenchEntry* base = none.count(e.case_name + "/" + e.backend) ? none[e.case_name + "/" + e.backend] : nullptr;
    t.rows.push_back({e.case_name, e.backend, e.op.substr(11, e.op.size() - 12), ms(e.seconds()),
                      base ? ratio(e.seconds(), base->seconds()) : "-", mib(e.activation_peak_bytes),
                      base ? ratio(e.activation_peak_bytes, base->activation_peak_bytes) : "-",
                      fmt("%.0f", e.recomputations)});
  }
  return t;
}

// The bare conv's time and bytes for a fused entry: its forward, or its backward as
// one call or as the sum of the split ops; 0 when the run lacks them.
std::pair<double, double> bare_of(const std::vector<BenchEntry>& all, const BenchEntry& f) {
  const bool fwd = f.op == "fused_forward";
  if (const BenchEntry* c = find(all, f, fwd ? "conv_forward" : "conv_backward", f.geometry))
    return {c->seconds(), c->bytes};
  if (fwd) return {0.0, 0.0};
  double s = 0.0, b = 0.0;
  for (const char* op : {"conv_backward_data", "conv_backward_weight", "conv_backward_bias"}) {
    const BenchEntry* p = find(all, f, op, f.geometry);
    if (p == nullptr) return {0.0, 0.0};
    s += p->seconds(), b += p->bytes;
  }
  return {s, b};
}

Table fused_table(const std::vector<BenchEntry>& all) {
  Table t{"fused",
          "Fused conv+bias+relu against the bare conv with its bias",
          "unfused adds a relu pass: forward reads and writes y (2 y), backward reads dy and the mask and writes dz "
          "(3 y); the bare backward is the one backward call or the data + weight + bias ops",
          {"case", "backend", "mode", "pass", "fused ms", "bare ms", "fused / bare", "fused MiB", "unfused MiB"}};
  for (const BenchEntry& f : all) {
    if (!timed(f) || (f.op != "fused_forward" && f.op != "fused_backward")) continue;
    const bool fwd = f.op == "fused_forward";
    const auto [bare, bare_bytes] = bare_of(all, f);
    if (bare <= 0.0) continue;
    t.rows.push_back({f.case_name, f.backend, f.mode, fwd ? "forward" : "backward", ms(f.seconds()), ms(bare),
                      ratio(f.seconds(), bare), mib(f.bytes), mib(bare_bytes + (fwd ? 2.0 : 3.0) * f.y_bytes)});
  }
  return t;
}

Table pool_table(const std::vector<BenchEntry>& all) {
  Table t{"pool",
          "Max pool training against inference: time, and the memory the argmax indices cost",
          "indices MiB: what the training op holds beyond the inference op (the backend's own index format)",
          {"case", "backend", "mode", "inference ms", "training ms", "training / inference", "indices MiB"}};
  for (const BenchEntry& inf : all) {
    if (!timed(inf) || inf.op != "pool_inference") continue;
    const BenchEntry* tr = find(all, inf, "pool_training", inf.geometry);
    if (tr == nullptr) continue;
    t.rows.push_back({inf.case_name, inf.backend, inf.mode, ms(inf.seconds()), ms(tr->seconds()),
                      ratio(tr->seconds(), inf.seconds()),
                      mib(static_cast<double>(tr->peak_bytes() - inf.peak_bytes()))});
  }
  return t;
}

// One backend's forward peaks of a 3-D family, lowest resolution first; a row says so
// when it holds more than a higher resolution, with the algorithms as the likely why.
void conv3d_rows(std::vector<const BenchEntry*> f, Table& t) {
  std::sort(f.begin(), f.end(),
            [](const BenchEntry* a, const BenchEntry* b) { return a->activation_bytes < b->activation_bytes; });
  for (size_t i = 0; i < f.size(); ++i) {
    std::string flag;
    for (size_t j = i + 1; j < f.size(); ++j) {
      if (f[i]->peak_bytes() > f[j]->peak_bytes())
        flag = "costs more than " + f[j]->resolution + " (workspace " +
               mib(static_cast<double>(f[i]->workspace_bytes)) + " vs " +
               mib(static_cast<double>(f[j]->workspace_bytes)) + " MiB; algorithm " + f[i]->algorithm + " vs " +
               f[j]->algorithm + ")";
    }
    const BenchEntry& e = *f[i];
    t.rows.push_back({e.family, e.backend, e.resolution, mib(e.activation_bytes),
                      mib(static_cast<double>(e.workspace_bytes)), mib(static_cast<double>(e.peak_bytes())),
                      mib(static_cast<double>(e.rss_peak_bytes)), flag.empty() ? "-" : flag});
  }
}

Table conv3d_table(const std::vector<BenchEntry>& all) {
  Table t{"conv3d",
          "3-D conv forward memory against input resolution",
          "peak: the device's measured peak where there is one, else held + workspace; host RSS: the process's "
          "resident high-water mark over prepare and runs",
          {"family", "backend", "resolution", "activations MiB", "workspace MiB", "peak MiB", "host RSS MiB",
           "lower resolution costs more?"}};
  std::map<std::string, std::vector<const BenchEntry*>> families;
  for (const BenchEntry& e : all) {
    if (timed(e) && e.spatial_rank == 3 && e.op == "conv_forward" && e.mode != "cold")
      families[e.family + "\x1f" + e.backend].push_back(&e);
  }
  for (auto& [key, f] : families) {
    if (f.size() >= 2) conv3d_rows(f, t);
  }
  return t;
}

Table atomic_table(const std::vector<BenchEntry>& all) {
  Table t{"atomic_dw",
          "Weight gradient: deterministic against float atomics",
          "a backend without an atomic variant has no row; the atomic one is not bitwise reproducible",
          {"case", "backend", "mode", "deterministic ms", "atomic ms", "atomic / deterministic"}};
  for (const BenchEntry& a : all) {
    if (!timed(a) || a.op != "conv_backward_weight_atomic") continue;
    if (const BenchEntry* d = find(all, a, "conv_backward_weight", a.geometry))
      t.rows.push_back(
          {a.case_name, a.backend, a.mode, ms(d->seconds()), ms(a.seconds()), ratio(a.seconds(), d->seconds())});
  }
  if (t.rows.empty()) t.note = "no backend in this run offers a weight gradient with float atomics";
  return t;
}

}  // namespace

std::vector<Table> seed_tables(const std::vector<BenchEntry>& entries) {
  return {checkpoint_table(entries), fused_table(entries), pool_table(entries), conv3d_table(entries),
          atomic_table(entries)};
}

std::string table_text(const Table& t) {
  std::vector<size_t> width(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
  for (const auto& row : t.rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out = t.title + "\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size() && c < width.size(); ++c) {
      out += (c ? "  " : "  ") + cells[c] + std::string(width[c] - cells[c].size(), ' ');
    }
    out += "\n";
  };
  line(t.columns);
  for (const auto& row : t.rows) line(row);
  if (t.rows.empty()) out += "  (no entries of this kind in the run)\n";
  if (!t.note.empty()) out += "  note: " + t.note + "\n";
  return out;
}

}  // namespace kc::bench
