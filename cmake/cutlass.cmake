# CUTLASS, pinned (docs/architecture.md, "CUTLASS"): the headers of the nvidia-cutlass
# 4.2.0.0 wheel, fetched and checked by scripts/fetch-cutlass.sh into the build folder,
# or another copy of the same tree named by KC_CUTLASS_DIR. Gives the INTERFACE target
# kc_cutlass (its include trees as system headers, so that the project's warnings stay
# its own; --expt-relaxed-constexpr, which its conv headers need under nvcc) and
# KC_HAVE_CUTLASS. Included by gpu/ only: without nvcc nothing of it is built.
set(KC_CUTLASS_VERSION 4.2.0)
set(KC_CUTLASS_DIR "${PROJECT_BINARY_DIR}/_deps/cutlass-4.2.0.0" CACHE PATH
    "CUTLASS ${KC_CUTLASS_VERSION} headers: a folder holding include/ and tools/util/include/")
option(KC_REQUIRE_CUTLASS "Fail the configure when the pinned CUTLASS headers are not found" OFF)
set(KC_HAVE_CUTLASS OFF)
set(kc_cutlass_version_h "${KC_CUTLASS_DIR}/include/cutlass/version.h")
if(EXISTS "${kc_cutlass_version_h}")
  file(STRINGS "${kc_cutlass_version_h}" kc_cutlass_v REGEX "#define CUTLASS_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*CUTLASS_MAJOR ([0-9]+).*CUTLASS_MINOR ([0-9]+).*CUTLASS_PATCH ([0-9]+).*" "\\1.\\2.\\3"
                       kc_cutlass_found "${kc_cutlass_v}")
  if(kc_cutlass_found VERSION_EQUAL KC_CUTLASS_VERSION)
    add_library(kc_cutlass INTERFACE)
    target_include_directories(kc_cutlass SYSTEM INTERFACE "${KC_CUTLASS_DIR}/include"
                                                           "${KC_CUTLASS_DIR}/tools/util/include")
    target_compile_options(kc_cutlass INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    set(KC_HAVE_CUTLASS ON)
    message(STATUS "kernelcheck: CUTLASS ${kc_cutlass_found} from ${KC_CUTLASS_DIR}")
  else()
    message(STATUS "kernelcheck: ${KC_CUTLASS_DIR} holds CUTLASS '${kc_cutlass_found}', not the pinned "
                   "${KC_CUTLASS_VERSION}: the CUTLASS engine is not built")
  endif()
else()
  message(STATUS "kernelcheck: no CUTLASS headers in ${KC_CUTLASS_DIR} (scripts/fetch-cutlass.sh fetches them; "
                 "KC_CUTLASS_DIR names another copy): the CUTLASS engine is not built")
endif()
if(KC_REQUIRE_CUTLASS AND NOT KC_HAVE_CUTLASS)
  message(FATAL_ERROR "kernelcheck: KC_REQUIRE_CUTLASS is set and ${KC_CUTLASS_DIR} holds no CUTLASS "
                      "${KC_CUTLASS_VERSION} (scripts/fetch-cutlass.sh)")
endif()
