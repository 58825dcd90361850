// supports_probe (steering.h).
#include "gen/steering.h"

#include "stack/stack.h"
#include "stack/stack_exec.h"

namespace kc::fuzz {
namespace {

bool supported(const Backend& b, const Case& c) {
  if (!is_stack(c)) return b.supports(c).ok();
  const auto layers = stack_layers(c);
  return !layers.ok() || stack_supports(b, *layers).ok();
}

}  // namespace

IsolatedTask supports_probe(const Registry& registry, const std::string& backend, std::vector<Case> cases) {
  CaseResult label;
  label.case_name = "the supports() probe of " + std::to_string(cases.size()) + " draws";
  label.backend = backend;
  return {label, [&registry, backend, cases = std::move(cases)] {
            CaseResult r;
            r.backend = backend;
            const std::unique_ptr<Backend> b = registry.make(backend);
            for (const Case& c : cases) r.message += b && supported(*b, c) ? '1' : '0';
            return r;
          }};
}

std::string probe_answer(const CaseResult& r, size_t count) {
  if (r.disposition != Disposition::kPassed || r.message.size() != count) return {};
  return r.message;
}

}  // namespace kc::fuzz
