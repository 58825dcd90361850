// Internal to the generators: the rules an invalid case can break, each as a function
// that turns a valid case into one that breaks that rule and nothing else, and says
// which text the refusal must contain. Case rules (validate() enforces them) edit the
// Case; reader rules (only the YAML reader enforces them) edit the case file text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kc/case.h"

namespace kc::gen::detail {

struct Breakage {
  std::string error;  // substring of the refusal
  std::string yaml;   // reader rules: the edited file text; empty for case rules
};

// `c` is valid on entry; `dim` < its rank, `amount` >= 1 picks how far to break.
using BreakFn = Breakage (*)(Case& c, size_t dim, int64_t amount);

struct Rule {
  const char* name;
  BreakFn apply;
};

// The rules that can break `c` (a valid case), case rules and reader rules apart.
std::vector<Rule> case_rules(const Case& c);
std::vector<Rule> reader_rules(const Case& c);

// The rule lists the op modules' op_rules (ops/op_module.h) are made of, in the order a
// seed keeps generating: the rules of every single op, of a conv's fields, and of a
// stack's own fields.
std::vector<Rule> single_op_rules();
std::vector<Rule> conv_rules();
std::vector<Rule> stack_rules(const StackParams& p);
// `a` then `b`.
inline std::vector<Rule> joined(std::vector<Rule> a, const std::vector<Rule>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// Rules more than one op breaks: a bias tensor the case does not have (conv), a w on a
// pool.
Breakage bias_tensor(Case& c, size_t dim, int64_t amount);
Breakage pool_weights(Case& c, size_t dim, int64_t amount);

// The case's window with strides, dilations and padding written out in full, with the
// same geometry, and one dim's dilated kernel extent.
struct WindowRef;
WindowRef make_explicit(Case& c);
int64_t window_extent(const WindowRef& w, size_t i);

// The field prefix validate() uses for the op's params: its name, or stack.layer.conv.
std::string op_field(const Case& c);

}  // namespace kc::gen::detail
