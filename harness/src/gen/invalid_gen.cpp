// The generator of invalid cases: a valid case (without inline data, whose shape a
// broken size would contradict), one rule drawn from those that apply to its op, and
// where to break it. The case file carries `expect: {error: ...}`, so that kcheck run
// passes it exactly when it is refused with that text.
#include "gen/gen.h"
#include "invalid.h"
#include "kc/case_io.h"
#include "pick.h"

namespace kc::gen {
namespace {

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

struct Entry {
  detail::Rule rule;
  bool reader_only;
};

InvalidCase make_invalid(Case c, const Entry& e, size_t dim, int64_t amount) {
  InvalidCase r;
  r.rule = e.rule.name;
  r.reader_only = e.reader_only;
  const detail::Breakage b = e.rule.apply(c, dim, amount);
  r.error = b.error;
  if (b.yaml.empty()) {
    c.expect = Expectation{false, b.error};
    r.yaml = case_to_yaml(c);
  } else {
    r.yaml = b.yaml + "expect: {error: " + quoted(b.error) + "}\n";
  }
  r.c = std::move(c);
  return r;
}

}  // namespace

rc::Gen<InvalidCase> invalid_case(const OpSet& ops) {
  Options plain;
  plain.data = 0;
  return rc::gen::mapcat(valid_case(ops, plain), [](const Case& base) {
    std::vector<Entry> rules;
    for (const detail::Rule& r : detail::case_rules(base)) rules.push_back({r, false});
    for (const detail::Rule& r : detail::reader_rules(base)) rules.push_back({r, true});
    const int64_t rank = static_cast<int64_t>(base.input.spatial.size());
    return rc::gen::apply(
        [base, rules](int64_t which, int64_t dim, int64_t amount) {
          return make_invalid(base, rules[static_cast<size_t>(which)], static_cast<size_t>(dim), amount);
        },
        detail::between(0, static_cast<int64_t>(rules.size()) - 1), detail::between(0, rank - 1),
        detail::between(1, 3));
  });
}

}  // namespace kc::gen
