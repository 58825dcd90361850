// The plugin entry points: kcheck run CASES --plugin libmy_kernels.so --backend my.conv2d
#include "kc/plugin.h"
#include "my_backend.h"

namespace {

void register_mine(kc::Registry& r) { (void)r.add("my.conv2d", make_my_backend); }

}  // namespace

KC_PLUGIN(register_mine)
