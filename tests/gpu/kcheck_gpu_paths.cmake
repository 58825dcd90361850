# kcheck end to end with the GPU backends, on any machine (ctest, labels cpu;smoke):
#   - `kcheck backends` lists cuda (and cudnn when built) as available or as
#     unavailable with a reason;
#   - when cuda is unavailable: `kcheck run CASE --require cuda` exits 2 and says why,
#     and `kcheck run CASE --backend cuda` exits 0 with the case SKIPPED (never FAILED or
#     CRASHED), the reason in the report;
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
  execute_process(COMMAND "${KCHECK}" run "${CASE}" --backend ${name} --report "${WORK}/${name}.json"
                  OUTPUT_VARIABLE bout ERROR_VARIABLE berr RESULT_VARIABLE brc)
  if(NOT brc EQUAL 0)
    message(FATAL_ERROR "kcheck run --backend ${name} with ${name} unavailable exited ${brc}:\n${bout}${berr}")
  endif()
  file(READ "${WORK}/${name}.json" report)
  if(NOT report MATCHES "\"disposition\": *\"SKIPPED\"" OR NOT report MATCHES "unavailable \\(")
    message(FATAL_ERROR "the case on ${name} is not SKIPPED with the reason:\n${report}")
  endif()
  if(report MATCHES "\"(FAILED|CRASHED)\"")
    message(FATAL_ERROR "a case on unavailable ${name} FAILED or CRASHED:\n${report}")
  endif()
  # The report says which build ran it; a build with CUDA names the device it found (none).
  if(NOT report MATCHES "\"kc_version\": \"[0-9]" OR NOT report MATCHES "\"kc_commit\": \"")
    message(FATAL_ERROR "the report does not name the build:\n${report}")
  endif()
  if(NOT reason MATCHES "^built without CUDA" AND NOT report MATCHES "\"device\": \"none: ")
    message(FATAL_ERROR "the report of a CUDA build does not say which device it found:\n${report}")
  endif()
endforeach()
message(STATUS "cuda unavailable (${reason}): --require exits 2, cases are SKIPPED")
