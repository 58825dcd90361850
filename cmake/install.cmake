# Install rules and the kernelcheck CMake package (docs/plugins.md, "Your cases in your ctest"): users link the
# installed libraries and register their own backends, or build a plugin for kcheck.
#
#   find_package(kernelcheck 0.1 REQUIRED)
#   add_library(my_kernels MODULE my_backend.cpp)   # kcheck run ... --plugin
#   target_link_libraries(my_kernels PRIVATE kc::harness)
#
# Installed: the static libraries kc::core, kc::io, kc::reference, kc::harness,
# kc::backends (the built-in registry; with kc::gpu when built), the public headers
# (kc/*.h, kc/ref/*.h; harness/src stays private), kcheck as kc::kcheck, and the package
# files under lib/cmake/kernelcheck. The libraries are static, so their private
# dependencies (Eigen, yaml-cpp, Threads, the CUDA runtime for kc::backends) are link
# dependencies of a consumer: the package config finds them with find_dependency first.
# A plugin links kc::harness, which pulls in no CUDA.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/kernelcheck")
set(kc_installed_libs kc_core kc_io kc_reference kc_harness kc_backends)
if(TARGET kc_gpu)
  list(APPEND kc_installed_libs kc_gpu)
endif()

# kc_core -> kc::core, ...: the same names as the in-tree aliases, so that a consumer's
# CMake works both with add_subdirectory and with find_package.
foreach(lib IN LISTS kc_installed_libs)
  string(REGEX REPLACE "^kc_" "" export_name "${lib}")
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${export_name})
endforeach()

# The public headers are C++20 (defaulted comparisons): say so to every consumer.
set_property(TARGET kc_core APPEND PROPERTY INTERFACE_COMPILE_FEATURES cxx_std_20)

install(TARGETS ${kc_installed_libs} kcheck
        EXPORT kernelcheckTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS kcheck-dashboard RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})  # a tool, not exported
if(TARGET kcheck-bench)
  install(TARGETS kcheck-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The corpus, for kcheck run "${KERNELCHECK_CASES}" and kc_add_case_tests(DIR ...).
set(KC_INSTALL_CASESDIR "${CMAKE_INSTALL_DATADIR}/kernelcheck/cases")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/cases/" DESTINATION "${KC_INSTALL_CASESDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/harness/include/" "${PROJECT_SOURCE_DIR}/reference/include/"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
if(TARGET kc_gpu)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/gpu/include/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
endif()
install(EXPORT kernelcheckTargets NAMESPACE kc:: DESTINATION "${KC_INSTALL_CMAKEDIR}")

# The find_dependency lines of the package config: one per imported target that the
# installed libraries link, read from the targets so that a new dependency cannot be
# forgotten here.
set(kc_linked "")
foreach(lib IN LISTS kc_installed_libs)
  get_target_property(libs ${lib} LINK_LIBRARIES)
  if(libs)
    list(APPEND kc_linked ${libs})
  endif()
endforeach()
# Where this build found the CUDA toolkit: a hint for the consumer's find_dependency.
set(KC_CUDA_ROOT_HINT "")
if(CMAKE_CUDA_COMPILER)
  get_filename_component(KC_CUDA_ROOT_HINT "${CMAKE_CUDA_COMPILER}" DIRECTORY)
  get_filename_component(KC_CUDA_ROOT_HINT "${KC_CUDA_ROOT_HINT}" DIRECTORY)
endif()
set(KC_PACKAGE_DEPENDENCIES "")
foreach(dep IN ITEMS "Eigen3::Eigen|Eigen3 3.3 NO_MODULE" "yaml-cpp|yaml-cpp" "Threads::Threads|Threads"
                     "rapidcheck|rapidcheck" "CUDA::cudart_static|CUDAToolkit")
  string(REPLACE "|" ";" dep "${dep}")
  list(GET dep 0 target)
  list(GET dep 1 package)
  if(NOT target IN_LIST kc_linked)
    continue()
  endif()
  if(package STREQUAL "CUDAToolkit")  # where this build found it, unless told otherwise
    string(APPEND KC_PACKAGE_DEPENDENCIES
           "if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS \"${KC_CUDA_ROOT_HINT}\")\n"
           "  set(CUDAToolkit_ROOT \"${KC_CUDA_ROOT_HINT}\")\n"
           "endif()\n")
  endif()
  string(APPEND KC_PACKAGE_DEPENDENCIES "find_dependency(${package})\n")
endforeach()

# The oneDNN peers link DNNL::dnnl: Debian's dnnl package config where it loads (it
# needs OpenCL's headers), else the library this build found, as the same imported target.
if(TARGET kc_onednn)
  set(kc_dnnl_location "")
  if(TARGET DNNL::dnnl)  # peers/onednn made it GLOBAL: the library found directly
    get_target_property(kc_dnnl_location DNNL::dnnl IMPORTED_LOCATION)
    get_target_property(kc_dnnl_include DNNL::dnnl INTERFACE_INCLUDE_DIRECTORIES)
  endif()
  if(kc_dnnl_location)
    string(APPEND KC_PACKAGE_DEPENDENCIES
           "if(NOT TARGET DNNL::dnnl)\n"
           "  add_library(DNNL::dnnl UNKNOWN IMPORTED)\n"
           "  set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION \"${kc_dnnl_location}\"\n"
           "                        INTERFACE_INCLUDE_DIRECTORIES \"${kc_dnnl_include}\")\n"
           "endif()\n")
  else()
    string(APPEND KC_PACKAGE_DEPENDENCIES "find_dependency(dnnl)\n")
  endif()
endif()

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/kernelcheckConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/kernelcheckConfig.cmake"
                              INSTALL_DESTINATION "${KC_INSTALL_CMAKEDIR}" PATH_VARS KC_INSTALL_CASESDIR)
# 0.x: the plugin ABI and the headers may change between minor versions.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/kernelcheckConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/kernelcheckConfig.cmake" "${PROJECT_BINARY_DIR}/kernelcheckConfigVersion.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/kernelcheckCaseTests.cmake"
        DESTINATION "${KC_INSTALL_CMAKEDIR}")
# The Python bridge, where kcheck --python looks for it beside an installed kcheck
# (harness/src/backend/python_modules.cpp).
if(TARGET kc_python)
  install(TARGETS kc_python LIBRARY DESTINATION lib/kernelcheck)
endif()
