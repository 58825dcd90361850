// --shard i/n or --shard auto for run and fuzz: auto reads the index and count a scheduler
// gives each task of an array (Slurm) or of an indexed job (Kubernetes).
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"

namespace kc::cli {
namespace {

constexpr uint64_t kMaxShards = 1u << 20;

// Sets shard i of n when 0 <= i < n <= kMaxShards; false otherwise.
bool set_shard(const std::optional<uint64_t>& i, const std::optional<uint64_t>& n, int64_t& shard, int64_t& shards) {
  if (!i || !n || *n == 0 || *i >= *n || *n > kMaxShards) return false;
  shard = static_cast<int64_t>(*i);
  shards = static_cast<int64_t>(*n);
  return true;
}

std::optional<uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::nullopt : parse_uint(v);
}

// Slurm job arrays: SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN (0 unless set) up to
// SLURM_ARRAY_TASK_COUNT tasks; Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX, with the
// count in KC_SHARD_COUNT (the job spec's completions, which the pod is not told).
std::string from_environment(int64_t& shard, int64_t& shards) {
  if (std::getenv("SLURM_ARRAY_TASK_ID") != nullptr) {
    const auto id = env_number("SLURM_ARRAY_TASK_ID"), count = env_number("SLURM_ARRAY_TASK_COUNT");
    const auto min =
        std::getenv("SLURM_ARRAY_TASK_MIN") ? env_number("SLURM_ARRAY_TASK_MIN") : std::optional<uint64_t>(0);
    if (!id || !count || !min || *id < *min) {
      return "--shard auto: SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT (and SLURM_ARRAY_TASK_MIN) must be whole "
             "numbers with MIN <= ID (an array --array=0-N)";
    }
    if (!set_shard(*id - *min, count, shard, shards)) {
      return "--shard auto: SLURM_ARRAY_TASK_ID " + std::to_string(*id) + " is not one of the " +
             std::to_string(*count) + " tasks of the array";
    }
    return {};
  }
  if (std::getenv("JOB_COMPLETION_INDEX") != nullptr) {
    if (!set_shard(env_number("JOB_COMPLETION_INDEX"), env_number("KC_SHARD_COUNT"), shard, shards)) {
      return "--shard auto: JOB_COMPLETION_INDEX must be a whole number below KC_SHARD_COUNT (set it to the job's "
             "completions)";
    }
    return {};
  }
  return "--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes "
         "Indexed Job) is set";
}

}  // namespace

std::string parse_shard_option(const std::string& v, int64_t& shard, int64_t& shards) {
  if (v == "auto") return from_environment(shard, shards);
  const size_t slash = v.find('/');
  const auto i = slash == std::string::npos ? std::nullopt : parse_uint(v.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : parse_uint(v.substr(slash + 1));
  if (!set_shard(i, n, shard, shards)) {
    return "--shard: expected i/n with 0 <= i < n <= " + std::to_string(kMaxShards) + ", or auto, got '" + v + "'";
  }
  return {};
}

std::string case_set_digest(const std::vector<std::string>& files) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the names, each ended by a NUL
  for (const std::string& f : files) {
    for (unsigned char c : f) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0u) * 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::to_string(files.size()) + " files, " + hex;
}

std::vector<std::string> shard_of(const std::vector<std::string>& files, int64_t shard, int64_t shards) {
  std::vector<std::string> mine;
  for (size_t k = 0; k < files.size(); ++k) {
    if (static_cast<int64_t>(k % static_cast<size_t>(shards)) == shard) mine.push_back(files[k]);
  }
  return mine;
}

}  // namespace kc::cli
