// Shared by the case-file tests: a small conv case and the reading helpers.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kc/case_io.h"

namespace kc::io_test {

inline constexpr const char* kConv1d =
    "op: conv\n"
    "input: {batch: 1, channels: 2, spatial: [8]}\n"
    "conv: {out_channels: 2, kernel: [3]}\n";

inline std::vector<LoadedCase> parse(const std::string& yaml) { return parse_cases(yaml, "t.yaml"); }

// The only case in `yaml`, which must load.
inline Case load_ok(const std::string& yaml) {
  std::vector<LoadedCase> v = parse(yaml);
  EXPECT_EQ(v.size(), 1u);
  if (v.empty()) return Case{};
  EXPECT_TRUE(v[0].c.ok()) << v[0].c.status().to_string();
  return v[0].c.ok() ? v[0].c.value() : Case{};
}

// The error message of the only entry, which must be an error.
inline std::string load_error(const std::string& yaml) {
  std::vector<LoadedCase> v = parse(yaml);
  EXPECT_EQ(v.size(), 1u);
  if (v.empty() || v[0].c.ok()) {
    ADD_FAILURE() << "expected an error for:\n" << yaml;
    return "";
  }
  return v[0].c.status().message();
}

inline PadSpec conv_padding(const Case& c) { return std::get<ConvParams>(c.op).padding; }

// A case file and substrings its error message must hold.
struct ErrorCase {
  std::string yaml;
  std::vector<std::string> want;  // substrings of the message
};

}  // namespace kc::io_test
