// The stack module's part of the single-op checks: none; a stack's layers are checked as
// their own cases, and its own checks are in stack/.
#include "checks/shape_mutations.h"
#include "ops/op_module.h"

namespace kc::checks {

void add_shape_mutations(std::vector<ShapeMutation>& m, const StackParams&) { m.clear(); }

}  // namespace kc::checks
