# kcheck end to end with the GPU backends, on any machine (ctest, labels cpu;smoke):
#   - `kcheck backends` lists cuda (and cudnn when built) as available or as
#     unavailable with a reason;
#   - when cuda is unavailable: `kcheck run CASE --require cuda` and `kcheck run CASE
#     --backend cuda` exit 2 and say why (a backend named and unavailable is a usage
#     error, never a run of SKIPPED cases); without a driver the reason says so;
#   - a run on the available backends reports every backend considered, cuda and cudnn
#     with their state, and names the build and the device it found;
#   - when cuda is available: `--require cuda` is satisfied (exit 0 or 1, not 2).
# In a build without CUDA (or cuDNN) they are listed as unavailable with that reason.
# cmake -DKCHECK=<path> -DCASE=<yaml> -DWORK=<dir> [-DCUDNN=ON] -P kcheck_gpu_paths.cmake
execute_process(COMMAND "${KCHECK}" backends OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message(STATUS "kcheck backends:\n${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kcheck backends exited ${rc}")
endif()
set(names cuda)
if(CUDNN)
  list(APPEND names cudnn)
endif()
foreach(name IN LISTS names)
  if(NOT out MATCHES "${name} +(available|unavailable \\([^\n]+\\))\n")
    message(FATAL_ERROR "kcheck backends does not list ${name} as available or unavailable (reason)")
  endif()
endforeach()
string(REGEX MATCH "cuda +unavailable \\(([^\n]+)\\)\n" _ "${out}")
set(reason "${CMAKE_MATCH_1}")

file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${KCHECK}" run "${CASE}" --require cuda --report "${WORK}/require.json"
                OUTPUT_VARIABLE rout ERROR_VARIABLE rerr RESULT_VARIABLE rrc)
if(reason STREQUAL "")
  if(rrc EQUAL 2)
    message(FATAL_ERROR "cuda is available, yet --require cuda exited 2: ${rerr}")
  endif()
  message(STATUS "cuda available: --require cuda exit ${rrc}")
  return()
endif()
if(NOT rrc EQUAL 2)
  message(FATAL_ERROR "--require cuda with cuda unavailable exited ${rrc}, not 2:\n${rout}${rerr}")
endif()
if(NOT "${rout}${rerr}" MATCHES "--require cuda: unavailable \\(")
  message(FATAL_ERROR "--require cuda did not give the reason:\n${rout}${rerr}")
endif()

foreach(name IN LISTS names)
  execute_process(COMMAND "${KCHECK}" run "${CASE}" --backend ${name} OUTPUT_VARIABLE bout ERROR_VARIABLE berr
                  RESULT_VARIABLE brc)
  if(NOT brc EQUAL 2 OR NOT berr MATCHES "--backend ${name}: unavailable \\(")
    message(FATAL_ERROR "kcheck run --backend ${name} with ${name} unavailable exited ${brc}, not 2 with the reason:\n${bout}${berr}")
  endif()
endforeach()
# Without the driver library the reason says so, not what the CUDA runtime says then.
execute_process(COMMAND ldconfig -p OUTPUT_VARIABLE libs ERROR_QUIET)
if(NOT libs MATCHES "libcuda\\.so\\.1" AND NOT reason MATCHES "^built without CUDA"
   AND NOT reason STREQUAL "no NVIDIA driver (libcuda.so.1 not found)")
  message(FATAL_ERROR "this machine has no libcuda.so.1, yet cuda is unavailable for another reason: ${reason}")
endif()

execute_process(COMMAND "${KCHECK}" run "${CASE}" --report "${WORK}/default.json" OUTPUT_VARIABLE dout
                RESULT_VARIABLE drc)
file(READ "${WORK}/default.json" report)
foreach(name IN LISTS names)
  if(NOT dout MATCHES "\n  ${name} +unavailable: [^\n]+\n" OR NOT report MATCHES "\"name\": \"${name}\", \"available\": false")
    message(FATAL_ERROR "the run does not list ${name} as unavailable with the reason:\n${dout}\n${report}")
  endif()
endforeach()
# The report says which build ran it; a build with CUDA names the device it found (none).
if(NOT report MATCHES "\"kc_version\": \"[0-9]" OR NOT report MATCHES "\"kc_commit\": \"")
  message(FATAL_ERROR "the report does not name the build:\n${report}")
endif()
if(NOT reason MATCHES "^built without CUDA" AND NOT report MATCHES "\"device\": \"none: ")
  message(FATAL_ERROR "the report of a CUDA build does not say which device it found:\n${report}")
endif()
message(STATUS "cuda unavailable (${reason}): --require and --backend exit 2, the run lists it with the reason")
