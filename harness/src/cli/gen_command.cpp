// kcheck gen: writes generated cases, one per file, named so that they sort in
// generation order (DIR/000000-conv.yaml, ...). Case k is the fuzzer's case k for the
// same seed and op (gen::generate), so `kcheck gen` shows what `kcheck fuzz` checks.
// A valid case is written only when its data can judge a kernel: one on which the oracle,
// run as a candidate, is MISTRUSTED (a relu that zeroes every output, a constant dw, ...)
// would make `kcheck run` exit 1 on the data, not on a kernel, so it is left out, its
// number skipped, and the next one drawn until N are written.
// More on the method: docs/notes.md, section harness/src/cli/gen_command.cpp.
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "cli.h"
#include "gen/boundary_sweep.h"
#include "gen/gen.h"
#include "gen/oracle_trust.h"
#include "kc/case_io.h"

namespace kc::cli {
namespace {

struct GenOptions {
  gen::OpSet ops = gen::kAllOps;
  uint64_t count = 10, seed = 0;
  bool seed_given = false, invalid = false, boundaries = false;
  std::string dir;
};

constexpr uint64_t kMaxCount = 10'000'000;  // files one gen writes

std::string parse(const Args& args, GenOptions& o) {
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--invalid" || a == "--boundaries") {
      (a == "--invalid" ? o.invalid : o.boundaries) = true;
      continue;
    }
    if (i + 1 >= args.size()) return "gen: unknown option or missing value: '" + a + "'";
    const std::string& v = args[++i];
    if (std::string twice = given_twice(seen, a == "-o" || a == "--out" ? "-o/--out" : a); !twice.empty()) return twice;
    if (a == "--op") {
      const auto ops = gen::parse_op_set(v);
      if (!ops) return "--op: expected " + gen::op_set_names() + ", got '" + v + "'";
      o.ops = *ops;
    } else if (a == "--count" || a == "--seed") {
      const auto n = parse_uint(v);
      if (a == "--count" && (!n || *n > kMaxCount)) {
        return "--count: expected an integer from 0 to " + std::to_string(kMaxCount) + ", got '" + v + "'";
      }
      if (!n) return a + ": expected a non-negative integer, got '" + v + "'";
      (a == "--count" ? o.count : o.seed) = *n;
      o.seed_given = o.seed_given || a == "--seed";
    } else if (a == "-o" || a == "--out") {
      o.dir = v;
    } else {
      return "gen: unknown option '" + a + "'";
    }
  }
  if (o.dir.empty()) return "gen: give the output folder with -o DIR";
  if (o.boundaries && (o.invalid || seen.count("--count") || seen.count("--seed"))) {
    return "--boundaries: the sweep is fixed by the op's parameters; it takes no --invalid, --count or --seed";
  }
  // Into a folder of its own: cases of an earlier run left beside these would be checked
  // with them by `kcheck run DIR`, and two of them could carry the same case number.
  std::error_code ec;
  if (std::filesystem::is_directory(o.dir, ec)) {
    const std::vector<std::string> old = find_case_files(o.dir).files;
    if (!old.empty()) {
      return "-o: '" + o.dir + "' already holds " + std::to_string(old.size()) + " case file" +
             (old.size() == 1 ? "" : "s") + " (" + old.front() + (old.size() == 1 ? "" : ", ...") +
             "); give an empty or new folder, so that kcheck run on it checks only these cases";
    }
  }
  return {};
}

std::string file_name(uint64_t k, std::string_view op) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%06llu-%.*s.yaml", static_cast<unsigned long long>(k), static_cast<int>(op.size()),
                op.data());
  return buf;
}

std::string header(const GenOptions& o, uint64_t k) {
  return "# kcheck gen --op " + std::string(gen::op_set_name(o.ops)) + " --seed " + std::to_string(o.seed) +
         (o.invalid ? " --invalid" : "") + ": case " + std::to_string(k) + "\n";
}

// The valid case k, or the invalid case k (with the rule it breaks in a comment).
struct Made {
  std::string text;
  std::string_view op;
  std::string mistrusted;  // a valid case the oracle cannot trust: why (the case is not written)
};

Made make(const GenOptions& o, uint64_t k, Backend& oracle) {
  if (!o.invalid) {
    Case c = gen::generate(gen::fuzz_case(o.ops), o.seed, k).value();
    c.name = "gen " + std::string(gen::op_set_name(o.ops)) + " seed " + std::to_string(o.seed) + " case " +
             std::to_string(k);
    return {header(o, k) + case_to_yaml(c), op_name(c.op), gen::mistrusted_on_oracle(c, oracle)};
  }
  const gen::InvalidCase bad = gen::generate(gen::invalid_case(o.ops), o.seed, k).value();
  return {header(o, k) + "# breaks rule " + bad.rule + "\n" + bad.yaml, op_name(bad.c.op), {}};
}

// The boundary sweep (gen/boundary_sweep.h) as one file per op, a case per line.
int write_boundaries(const GenOptions& o) {
  std::map<std::string, std::string> files;
  size_t count = 0;
  for (const Case& c : gen::boundary_sweep(o.ops)) {
    std::string& text = files[std::string(op_name(c.op))];
    if (text.empty()) {
      text = "# kcheck gen --boundaries: each quantity " + std::string(op_name(c.op)) +
             " kernels branch or index on, at 2^k - 1, 2^k and 2^k + 1,\n"
             "# every other dimension minimal (docs/cases.md, \"Boundary sweeps\"). Generated: do not edit;\n"
             "# the test boundaries.drift fails when these differ from what the generator writes.\n"
             "cases:\n";
    }
    text += "  - " + case_to_one_line(c) + "\n";
    ++count;
  }
  for (const auto& [op, text] : files) {
    const std::string path = (std::filesystem::path(o.dir) / ("boundaries_" + op + ".yaml")).string();
    if (std::string why = write_text_file(path, text); !why.empty())
      return usage_error("cannot write " + path + ": " + why);
  }
  std::printf("%zu boundary cases in %zu files in %s\n", count, files.size(), terminal_safe(o.dir).c_str());
  return 0;
}

}  // namespace

int gen_command(const Args& args) {
  if (wants_help(args)) {
    std::fputs(
        "usage: kcheck gen [--op OP] [--count N] [--seed S] [--invalid] -o DIR\n"
        "  writes N generated cases (default 10), one per file, DIR/000000-OP.yaml ...; --op all (default):\n"
        "  the single ops, --op stack: deep stacks; --invalid: cases that each break one rule and expect\n"
        "  the error, which kcheck run passes when refused. Valid cases whose data cannot judge a kernel\n"
        "  (MISTRUSTED) are left out, their numbers skipped, and more drawn so that N are written.\n"
        "  DIR must hold no case files yet (new or empty), so that kcheck run DIR checks these alone\n"
        "usage: kcheck gen --boundaries [--op ...] -o DIR\n"
        "  writes the boundary sweep of each op (every quantity kernels branch or index on, at 2^k - 1,\n"
        "  2^k and 2^k + 1), one file per op: DIR/boundaries_OP.yaml (cases/boundaries/ holds them)\n",
        stdout);
    std::printf("OP: %s\n", gen::op_set_names().c_str());
    return 0;
  }
  GenOptions o;
  if (std::string err = parse(args, o); !err.empty()) return usage_error(err);
  if (o.boundaries) return write_boundaries(o);
  if (!o.seed_given) o.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  std::printf("kcheck gen: seed %llu\n", static_cast<unsigned long long>(o.seed));
  // The oracle as a candidate: every check runs, so every check's trust rule is asked.
  auto oracle = make_reference_as_candidate("oracle (as a candidate)");
  // Draws past the requested count, for the cases left out: far more than data ever needs.
  const uint64_t draws = o.count + std::max<uint64_t>(100, o.count * 4);
  uint64_t written = 0, skipped = 0;
  std::string example;
  for (uint64_t k = 0; written < o.count && k < draws; ++k) {
    const Made m = make(o, k, *oracle);
    if (!m.mistrusted.empty()) {
      ++skipped;
      if (example.empty()) example = "case " + std::to_string(k) + ": " + m.mistrusted;
      continue;
    }
    const std::string path = (std::filesystem::path(o.dir) / file_name(k, m.op)).string();
    if (std::string why = write_text_file(path, m.text); !why.empty())
      return usage_error("cannot write " + path + ": " + why);
    ++written;
  }
  std::printf("%llu %s cases in %s\n", static_cast<unsigned long long>(written), o.invalid ? "invalid" : "generated",
              terminal_safe(o.dir).c_str());
  if (skipped > 0) {
    std::printf(
        "%llu left out: the oracle run as a candidate is MISTRUSTED on them, so their data cannot tell a right kernel "
        "from a wrong one (first: %s)\n",
        static_cast<unsigned long long>(skipped), terminal_safe(example).c_str());
  }
  if (written < o.count) {
    std::fprintf(stderr, "kcheck gen: only %llu of %llu cases written in %llu draws\n",
                 static_cast<unsigned long long>(written), static_cast<unsigned long long>(o.count),
                 static_cast<unsigned long long>(draws));
    return 1;
  }
  return 0;
}

}  // namespace kc::cli
