// kcheck gen: writes generated cases, one per file, named so that they sort in
// generation order (DIR/000000-conv.yaml, ...). Case k is the fuzzer's case k for the
// same seed and op (gen::generate), so `kcheck gen` shows what `kcheck fuzz` checks.
// With --invalid it writes cases that each break one rule and carry
// `expect: {error: ...}`, which `kcheck run` passes exactly when refused with that text.
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "cli.h"
#include "kc/case_io.h"
#include "kc/gen.h"

namespace kc::cli {
namespace {

struct GenOptions {
  gen::OpSet ops = gen::OpSet::kAll;
  uint64_t count = 10, seed = 0;
  bool seed_given = false, invalid = false;
  std::string dir;
};

std::string parse(const Args& args, GenOptions& o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--invalid") {
      o.invalid = true;
      continue;
    }
    if (i + 1 >= args.size()) return "gen: unknown option or missing value: '" + a + "'";
    const std::string& v = args[++i];
    if (a == "--op") {
      const auto ops = gen::parse_op_set(v);
      if (!ops) return "--op: expected conv, maxpool, conv_bias_relu, all or stack, got '" + v + "'";
      o.ops = *ops;
    } else if (a == "--count" || a == "--seed") {
      const auto n = parse_uint(v);
      if (!n || (a == "--count" && *n > 10'000'000)) return a + ": expected a non-negative integer, got '" + v + "'";
      (a == "--count" ? o.count : o.seed) = *n;
      o.seed_given = o.seed_given || a == "--seed";
    } else if (a == "-o" || a == "--out") {
      o.dir = v;
    } else {
      return "gen: unknown option '" + a + "'";
    }
  }
  return o.dir.empty() ? "gen: give the output folder with -o DIR" : "";
}

std::string file_name(uint64_t k, std::string_view op) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%06llu-%.*s.yaml", static_cast<unsigned long long>(k),
                static_cast<int>(op.size()), op.data());
  return buf;
}

std::string header(const GenOptions& o, uint64_t k) {
  return "# kcheck gen --op " + std::string(gen::op_set_name(o.ops)) + " --seed " + std::to_string(o.seed) +
         (o.invalid ? " --invalid" : "") + ": case " + std::to_string(k) + "\n";
}

// The valid case k, or the invalid case k (with the rule it breaks in a comment).
std::pair<std::string, std::string_view> make(const GenOptions& o, uint64_t k) {
  if (!o.invalid) {
    Case c = gen::generate(gen::valid_case(o.ops), o.seed, k).value();
    c.name = "gen " + std::string(gen::op_set_name(o.ops)) + " seed " + std::to_string(o.seed) + " case " + std::to_string(k);
    return {header(o, k) + case_to_yaml(c), op_name(c.op)};
  }
  const gen::InvalidCase bad = gen::generate(gen::invalid_case(o.ops), o.seed, k).value();
  return {header(o, k) + "# breaks rule " + bad.rule + "\n" + bad.yaml, op_name(bad.c.op)};
}

}  // namespace

int gen_command(const Args& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs("usage: kcheck gen [--op conv|maxpool|conv_bias_relu|all|stack] [--count N] [--seed S] [--invalid] -o DIR\n"
               "  writes N generated cases (default 10), one per file, DIR/000000-OP.yaml ...; --op all (default):\n"
               "  the single ops, --op stack: deep stacks; --invalid: cases that each break one rule and expect\n"
               "  the error, which kcheck run passes when refused\n",
               stdout);
    return 0;
  }
  GenOptions o;
  if (std::string err = parse(args, o); !err.empty()) return usage_error(err);
  if (!o.seed_given) o.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  std::printf("kcheck gen: seed %llu\n", static_cast<unsigned long long>(o.seed));
  for (uint64_t k = 0; k < o.count; ++k) {
    const auto [text, op] = make(o, k);
    const std::string path = (std::filesystem::path(o.dir) / file_name(k, op)).string();
    if (!write_text_file(path, text)) return usage_error("cannot write " + path);
  }
  std::printf("%llu %s cases in %s\n", static_cast<unsigned long long>(o.count), o.invalid ? "invalid" : "generated",
              o.dir.c_str());
  return 0;
}

}  // namespace kc::cli
