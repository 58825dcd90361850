// The seeds' claims as measurements (docs/bench.md, "Tables"): tables built from one
// run's entries, matched by case geometry, for `kcheck bench` to print and the JSON
// (kc_tables) to carry to the dashboard:
//   checkpoint  a stack's step time and activation memory per checkpoint policy;
//   fused       conv+bias+relu against the same conv with its bias, forward and backward;
//   pool        max pool training against inference, and what the indices cost;
//   conv3d      a 3-D conv's memory against its input resolution, per backend;
//   atomic_dw   the weight gradient deterministic against with float atomics.
#pragma once

#include <string>
#include <vector>

#include "bench/entry.h"

namespace kc::bench {

struct Table {
  std::string key, title, note;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

std::vector<Table> seed_tables(const std::vector<BenchEntry>& entries);

// A table as aligned text for a terminal.
std::string table_text(const Table& t);

}  // namespace kc::bench
