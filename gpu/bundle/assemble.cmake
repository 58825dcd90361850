# Assembles the portable GPU bundle (README.md beside this) from a KC_PORTABLE build.
#   cmake -DSOURCE=<repo> -DBUILD=<portable build> -DOUT=<bundle dir> -DCUDA_LIB=<dir>
#         [-DCOPY_CUDNN=ON] [-DCOPY_CUBLAS=ON] -P assemble.cmake
# Copies the binaries, every shared library they need that is not glibc, libstdc++ or
# libgcc (today: Google Benchmark's), the corpus (cases/bench included), run.sh,
# gpu-bench.sh and a manifest; then checks
# with ldd that every dependency resolves into lib/ or to one of those system libraries,
# and fails the build otherwise.
cmake_minimum_required(VERSION 3.22)

set(kc_system_libs "^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\\+\\+|libgcc_s)[.-]")

file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}/bin" "${OUT}/lib")

set(kc_bins "")
foreach(rel harness/kcheck apps/kcheck-dashboard tests/gpu_host_test tests/gpu_device_test apps/kcheck-bench)
  if(EXISTS "${BUILD}/${rel}")
    file(COPY "${BUILD}/${rel}" DESTINATION "${OUT}/bin")
    get_filename_component(name "${rel}" NAME)
    list(APPEND kc_bins "${OUT}/bin/${name}")
  endif()
endforeach()

# Shared libraries to carry: what the loader would pull in, minus the system's own.
file(GET_RUNTIME_DEPENDENCIES EXECUTABLES ${kc_bins}
     RESOLVED_DEPENDENCIES_VAR kc_resolved UNRESOLVED_DEPENDENCIES_VAR kc_unresolved)
if(kc_unresolved)
  message(FATAL_ERROR "bundle: unresolved shared libraries: ${kc_unresolved}")
endif()
foreach(lib IN LISTS kc_resolved)
  get_filename_component(name "${lib}" NAME)
  if(NOT name MATCHES "${kc_system_libs}")
    file(COPY "${lib}" DESTINATION "${OUT}/lib" FOLLOW_SYMLINK_CHAIN)
  endif()
endforeach()
# cuDNN and cuBLAS are dlopen'ed at run time (not in ldd's list): carried only on request,
# since the node usually has them (CUDA install, a pip wheel; run.sh searches both).
# cuBLAS is libcublas.so.N and the libcublasLt.so.N it loads.
foreach(kc_pair "COPY_CUDNN;libcudnn" "COPY_CUBLAS;libcublas")
  list(GET kc_pair 0 kc_flag)
  list(GET kc_pair 1 kc_prefix)
  if(${kc_flag})
    file(GLOB kc_dlopened "${CUDA_LIB}/${kc_prefix}*.so.*")
    foreach(lib IN LISTS kc_dlopened)
      file(COPY "${lib}" DESTINATION "${OUT}/lib" FOLLOW_SYMLINK_CHAIN)
    endforeach()
  endif()
endforeach()

file(COPY "${SOURCE}/cases" DESTINATION "${OUT}")
file(COPY "${SOURCE}/gpu/bundle/run.sh" "${SOURCE}/gpu/bundle/README.md" "${SOURCE}/scripts/gpu-bench.sh"
     DESTINATION "${OUT}"
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# Manifest: what was built from where.
execute_process(COMMAND git -C "${SOURCE}" rev-parse HEAD OUTPUT_VARIABLE kc_commit OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
execute_process(COMMAND git -C "${SOURCE}" status --porcelain OUTPUT_VARIABLE kc_dirty ERROR_QUIET)
string(TIMESTAMP kc_date "%Y-%m-%dT%H:%M:%SZ" UTC)
file(READ "${BUILD}/CMakeCache.txt" kc_cache)
file(WRITE "${OUT}/MANIFEST"
     "commit ${kc_commit}\n"
     "built ${kc_date}\n"
     "source ${SOURCE}\n")
if(kc_dirty)
  file(APPEND "${OUT}/MANIFEST" "working tree had uncommitted changes\n")
endif()
string(REGEX MATCH "CMAKE_CUDA_ARCHITECTURES:[^=]*=([^\n]*)" _ "${kc_cache}")
file(APPEND "${OUT}/MANIFEST" "cuda architectures ${CMAKE_MATCH_1}\n")

# The check: every dependency of every binary resolves into lib/ or to a system library.
foreach(bin IN LISTS kc_bins)
  execute_process(COMMAND ldd "${bin}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bundle: ldd ${bin} failed")
  endif()
  string(REPLACE "\n" ";" lines "${out}")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line STREQUAL "")
      continue()
    endif()
    string(REGEX MATCH "^([^ ]+)( => ([^ ]+))?" _ "${line}")
    set(name "${CMAKE_MATCH_1}")
    set(path "${CMAKE_MATCH_3}")
    if(path)
      get_filename_component(path "${path}" REALPATH)  # ldd prints bin/../lib/...
    endif()
    get_filename_component(base "${name}" NAME)
    if(line MATCHES "not found")
      message(FATAL_ERROR "bundle: ${bin}: ${name} not found")
    elseif(NOT base MATCHES "${kc_system_libs}" AND NOT path MATCHES "^${OUT}/lib/")
      message(FATAL_ERROR "bundle: ${bin} needs ${name} from ${path}, outside the bundle")
    endif()
  endforeach()
  get_filename_component(name "${bin}" NAME)
  file(APPEND "${OUT}/MANIFEST" "bin/${name}: ${out}")
endforeach()
# The oldest glibc (and libstdc++, if linked shared) the binaries and the libraries in
# lib/ run on: the highest symbol versions they import. run.sh compares it with the
# node's glibc before running.
set(kc_glibc "0")
set(kc_glibcxx "")
file(GLOB kc_libs "${OUT}/lib/*.so*")
foreach(bin IN LISTS kc_bins kc_libs)
  execute_process(COMMAND objdump -T "${bin}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bundle: objdump -T ${bin} failed (binutils is needed to read the glibc it needs)")
  endif()
  string(REGEX MATCHALL "GLIBC_[0-9]+\\.[0-9]+(\\.[0-9]+)?" vs "${syms}")
  foreach(v IN LISTS vs)
    string(REPLACE "GLIBC_" "" v "${v}")
    if(v VERSION_GREATER kc_glibc)
      set(kc_glibc "${v}")
    endif()
  endforeach()
  string(REGEX MATCHALL "GLIBCXX_[0-9]+\\.[0-9]+(\\.[0-9]+)*" vs "${syms}")
  foreach(v IN LISTS vs)
    string(REPLACE "GLIBCXX_" "" v "${v}")
    if(kc_glibcxx STREQUAL "" OR v VERSION_GREATER kc_glibcxx)
      set(kc_glibcxx "${v}")
    endif()
  endforeach()
endforeach()
file(APPEND "${OUT}/MANIFEST" "needs glibc ${kc_glibc}\n")
if(NOT kc_glibcxx STREQUAL "")
  file(APPEND "${OUT}/MANIFEST" "needs libstdc++ GLIBCXX_${kc_glibcxx}\n")
endif()
message(STATUS "bundle: ${OUT} (binaries ${kc_bins}; needs glibc ${kc_glibc})")
