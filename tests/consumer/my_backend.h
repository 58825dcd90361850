// The kernelcheck backend "my.conv2d" for the user's kernel (my_conv.h), shared by the
// plugin (my_plugin.cpp) and the project's own test binary (my_check.cpp).
#pragma once

#include <memory>

#include "kc/backend.h"

std::unique_ptr<kc::Backend> make_my_backend();
