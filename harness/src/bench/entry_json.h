// A bench entry as one object of Google Benchmark's JSON "benchmarks" array, with the
// kc_ fields of docs/bench.md, and back: the worker process hands its entries to the run
// in this form, and `--out` writes it. Times are in microseconds (time_unit "us").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bench/entry.h"
#include "kc/prepared_op.h"
#include "kc/status.h"

namespace kc::bench {

std::string entry_json(const BenchEntry& e);
// The fields entry_json wrote that a worker measured (not the run's judgement).
StatusOr<BenchEntry> parse_entry_json(std::string_view text);

// A ceiling as an entry named "ceiling/<device>/<name>".
std::string ceiling_json(const Ceiling& c);
std::string ceiling_wire(const Ceiling& c);  // one line, for the worker pipe
StatusOr<Ceiling> parse_ceiling_wire(std::string_view text);

}  // namespace kc::bench
