// The oneDNN peer backends (docs/bench.md, "Ceilings and peers"), CPU only:
//   onednn           memory format `any`: oneDNN picks layouts and kernels, as a framework gets them
//   onednn.plain     plain N C [D] [H] W / O I [D] [H] W layouts for every primitive
//   onednn.winograd  algorithm convolution_winograd (F(4,3)); supports() refuses what oneDNN
//                    cannot run as Winograd
// Built only when libdnnl-dev was found (KC_HAVE_ONEDNN).
#pragma once

#include <memory>
#include <string>

#include "kc/backend.h"

namespace kc::onednn {

std::unique_ptr<Backend> make_onednn_backend();
std::unique_ptr<Backend> make_onednn_plain_backend();
std::unique_ptr<Backend> make_onednn_winograd_backend();

// "oneDNN 2.6.3 (cpu runtime OpenMP)": the library this process loaded (dnnl_version()).
std::string library_version();

}  // namespace kc::onednn
