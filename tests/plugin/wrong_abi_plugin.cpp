// A library that claims another plugin ABI version: kcheck must refuse it before
// calling kc_register_backends.
#include "kc/plugin.h"

extern "C" int kc_plugin_abi_version(void) { return KC_PLUGIN_ABI_VERSION + 41; }
extern "C" int kc_register_backends(kc::Registry*, int) { __builtin_trap(); }
