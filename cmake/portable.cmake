# KC_PORTABLE: link kcheck and the test binaries so that they run on a GPU node that has
# glibc and a driver but none of our Debian packages (the kc_bundle target builds this
# way; see cmake/bundle.cmake and gpu/bundle/README.md).
#  - yaml-cpp from its static archive (Debian's package config imports the .so);
#    GoogleTest and RapidCheck are static in Debian already; the CUDA runtime is static;
#  - libstdc++ and libgcc linked statically, except for kcheck-bench: Google Benchmark
#    exists only as a shared C++ library in Debian, and two copies of libstdc++ in one
#    process (iostreams, exceptions) are worse than needing the node's libstdc++.so.6
#    (any newer one will do: this build needs GLIBCXX of GCC ${CMAKE_CXX_COMPILER_VERSION});
#  - RUNPATH $ORIGIN/../lib (the bundle's lib/: libbenchmark, optionally cuDNN), then
#    the usual CUDA install for libcudnn, which kc_gpu dlopens (dlopen searches the
#    executable's RUNPATH).
if(NOT KC_PORTABLE)
  return()
endif()

find_library(KC_YAML_CPP_STATIC NAMES libyaml-cpp.a)
if(KC_YAML_CPP_STATIC AND TARGET yaml-cpp)
  get_target_property(kc_yaml_configs yaml-cpp IMPORTED_CONFIGURATIONS)
  set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION "${KC_YAML_CPP_STATIC}")
  foreach(cfg IN LISTS kc_yaml_configs)
    set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION_${cfg} "${KC_YAML_CPP_STATIC}"
                                              IMPORTED_SONAME_${cfg} "" IMPORTED_NO_SONAME_${cfg} ON)
  endforeach()
  message(STATUS "kernelcheck: portable build links ${KC_YAML_CPP_STATIC}")
else()
  message(WARNING "kernelcheck: no libyaml-cpp.a; the bundle will need libyaml-cpp.so on the node")
endif()

add_link_options(-static-libstdc++ -static-libgcc)
set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)
set(CMAKE_INSTALL_RPATH "\$ORIGIN/../lib;/usr/local/cuda/lib64")
add_link_options(-Wl,--enable-new-dtags)  # RUNPATH, so LD_LIBRARY_PATH still wins
