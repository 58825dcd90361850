# The consumer test (cmake -P, from tests/CMakeLists.txt): install this build tree into a
# fresh prefix, configure tests/consumer against it with find_package(kernelcheck), build
# it, then run kcheck from the prefix with the consumer's plugin and the consumer's own
# test binary on its cases. Every step must succeed.
#   -D KC_BUILD_DIR=  -D KC_CONSUMER_DIR=  -D KC_WORK_DIR=  -D KC_GENERATOR=
#   -D KC_CXX_COMPILER=  -D KC_LAUNCHER=  -D KC_BUILD_TYPE=  -D KC_PLUGIN_FILE=
#   -D KC_PYTHON=ON where kcheck has its Python bridge and python3 has numpy
cmake_minimum_required(VERSION 3.22)

function(kc_step what)
  message(STATUS "consumer: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (${rc}): ${ARGN}")
  endif()
endfunction()

set(prefix "${KC_WORK_DIR}/prefix")
set(build "${KC_WORK_DIR}/build")
file(REMOVE_RECURSE "${KC_WORK_DIR}")

kc_step("install the build tree into ${prefix}" "${CMAKE_COMMAND}" --install "${KC_BUILD_DIR}" --prefix "${prefix}")
set(configure "${CMAKE_COMMAND}" -S "${KC_CONSUMER_DIR}" -B "${build}" -G "${KC_GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${KC_CXX_COMPILER}" "-DCMAKE_BUILD_TYPE=${KC_BUILD_TYPE}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "-DKC_PYTHON=${KC_PYTHON}")
if(KC_LAUNCHER)
  list(APPEND configure "-DCMAKE_CXX_COMPILER_LAUNCHER=${KC_LAUNCHER}")
endif()
kc_step("configure tests/consumer with find_package(kernelcheck)" ${configure})

# The package must come from the prefix, not from the build tree or the system.
file(STRINGS "${build}/CMakeCache.txt" found REGEX "^kernelcheck_DIR:")
string(REGEX REPLACE "^kernelcheck_DIR:[A-Z]+=" "" found "${found}")
if(NOT found STREQUAL "${prefix}/lib/cmake/kernelcheck")
  message(FATAL_ERROR "consumer: kernelcheck was found in '${found}', not in the prefix ${prefix}")
endif()

kc_step("build tests/consumer" "${CMAKE_COMMAND}" --build "${build}")
kc_step("kcheck run with the consumer's plugin" "${prefix}/bin/kcheck" run "${KC_CONSUMER_DIR}/cases"
        --plugin "${build}/${KC_PLUGIN_FILE}" --backend my.conv2d)
kc_step("the consumer's own test binary" "${build}/my_check" "${KC_CONSUMER_DIR}/cases/conv2d.yaml")

# kc_add_case_tests: the consumer's cases and the installed corpus as its own ctest tests.
execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" --test-dir "${build}" --output-on-failure RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "consumer: ctest\n${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "100% tests passed, 0 tests failed out of [1-9]"
   OR NOT out MATCHES "my/conv2d.yaml" OR NOT out MATCHES "shipped/" OR (KC_PYTHON AND NOT out MATCHES "py/conv2d.yaml"))
  message(FATAL_ERROR "consumer: the tests of kc_add_case_tests did not all run and pass (${rc})")
endif()
if(NOT EXISTS "${prefix}/bin/kcheck-bench" AND EXISTS "${KC_BUILD_DIR}/apps/kcheck-bench")
  message(FATAL_ERROR "consumer: kcheck-bench was built but not installed")
endif()

# A plugin that uses no GPU links no CUDA: kc::harness brings none of the runtime (whose
# strings kcheck itself, linked with kc::backends, does hold in a CUDA build).
file(STRINGS "${build}/${KC_PLUGIN_FILE}" cuda_strings REGEX "libcuda\\.so|cudaGetDeviceCount|__cudaRegisterFatBinary"
     LIMIT_COUNT 1)
if(cuda_strings)
  message(FATAL_ERROR "consumer: the plugin ${KC_PLUGIN_FILE} carries the CUDA runtime (${cuda_strings})")
endif()
