// The conv_bias_relu module's kcheck explain: its conv's, bias included.
#include <cstdio>
#include <string>

#include "cli/explain_text.h"
#include "ops/op_module.h"

namespace kc::cli {

void explain(const Case& c, const ConvBiasReluParams& p) { explain(c, p.conv); }
void explain_refused(const Case&, const ConvBiasReluParams&) {}

}  // namespace kc::cli
