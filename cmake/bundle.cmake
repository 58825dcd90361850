# kc_bundle: build/bundle/, a folder that runs the GPU checks on a node that lacks our
# Debian packages (gpu/bundle/README.md). It configures and builds this source tree a
# second time with KC_PORTABLE=ON (cmake/portable.cmake) in bundle-build/, then
# assembles bin/, lib/, cases/ and run.sh (gpu/bundle/assemble.cmake). Not part of
# `all`: `ninja kc_bundle`. The oneDNN peers stay out (they need Debian's libdnnl, and run
# on CPU machines, where the main build has them).
if(KC_PORTABLE AND TARGET kcheck-bench)
  # Google Benchmark is a shared C++ library: kcheck-bench uses the node's libstdc++.so.6
  # rather than a static copy beside libbenchmark's shared one (cmake/portable.cmake).
  set_property(TARGET kcheck-bench PROPERTY LINK_OPTIONS -Wl,--enable-new-dtags)
endif()
if(NOT KC_HAVE_CUDA OR KC_PORTABLE)
  return()
endif()

option(KC_BUNDLE_CUDNN "Copy libcudnn*.so* (about 500 MB) into the bundle's lib/" OFF)
option(KC_BUNDLE_CUBLAS "Copy libcublas*.so* (about 600 MB; the GPU GEMM ceilings) into the bundle's lib/" OFF)
set(kc_bundle_build "${PROJECT_BINARY_DIR}/bundle-build")
get_filename_component(kc_cuda_root "${CMAKE_CUDA_COMPILER}" DIRECTORY)  # .../bin
get_filename_component(kc_cuda_root "${kc_cuda_root}" DIRECTORY)
set(kc_bundle_args
  -DKC_PORTABLE=ON -DKC_ENABLE_ONEDNN=OFF -DCMAKE_BUILD_TYPE=Release -DKC_BUILD_TESTS=ON -DKC_BUILD_BENCH=${KC_BUILD_BENCH}
  "-DCMAKE_CUDA_COMPILER=${CMAKE_CUDA_COMPILER}" "-DCMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}"
  "-DKC_MARCH=${KC_MARCH}")
# The CUTLASS engine's headers, where this build has them: the bundle's `cuda` is then the
# same backend, and its configure fails rather than build a bundle without the engine.
if(KC_HAVE_CUTLASS)
  list(APPEND kc_bundle_args "-DKC_CUTLASS_DIR=${KC_CUTLASS_DIR}" -DKC_REQUIRE_CUTLASS=ON)
endif()
foreach(var CMAKE_CXX_COMPILER CMAKE_CXX_COMPILER_LAUNCHER CMAKE_CUDA_COMPILER_LAUNCHER)
  if(${var})
    list(APPEND kc_bundle_args "-D${var}=${${var}}")
  endif()
endforeach()
set(kc_bundle_targets kcheck kcheck-dashboard gpu_host_test gpu_device_test)
if(KC_BUILD_BENCH)
  list(APPEND kc_bundle_targets kcheck-bench)
endif()

add_custom_target(kc_bundle
  COMMAND "${CMAKE_COMMAND}" -S "${PROJECT_SOURCE_DIR}" -B "${kc_bundle_build}" -G "${CMAKE_GENERATOR}" ${kc_bundle_args}
  COMMAND "${CMAKE_COMMAND}" --build "${kc_bundle_build}" --target ${kc_bundle_targets}
  COMMAND "${CMAKE_COMMAND}" "-DSOURCE=${PROJECT_SOURCE_DIR}" "-DBUILD=${kc_bundle_build}"
          "-DOUT=${PROJECT_BINARY_DIR}/bundle" "-DCUDA_LIB=${kc_cuda_root}/lib64"
          "-DCOPY_CUDNN=${KC_BUNDLE_CUDNN}" "-DCOPY_CUBLAS=${KC_BUNDLE_CUBLAS}" -P "${PROJECT_SOURCE_DIR}/gpu/bundle/assemble.cmake"
  COMMENT "Building the portable GPU bundle in ${PROJECT_BINARY_DIR}/bundle"
  USES_TERMINAL VERBATIM)
