# The case with a tensor past 2^31 bytes (tensor_past_2gib.yaml) on every available
# backend, where the machine has the memory: skipped, with the reason, below GIB GiB of
# available memory (measured: the reference alone peaks at 14.7 GiB, in 58 s on 2
# cores; a candidate in its worker adds its own copies).
# Usage: cmake -DKCHECK=path -DCASE=path [-DGIB=32] -P run.cmake
if(NOT DEFINED GIB)
  set(GIB 32)
endif()
set(available_kib 0)
if(EXISTS /proc/meminfo)
  file(STRINGS /proc/meminfo line REGEX "^MemAvailable:")
  string(REGEX MATCH "[0-9]+" available_kib "${line}")
endif()
math(EXPR available_gib "${available_kib} / 1048576")
if(available_gib LESS GIB)
  message("SKIPPED: the case needs ${GIB} GiB of available memory, this machine has ${available_gib} GiB")
  return()
endif()
set(ENV{KC_MAX_CASE_BYTES} "400G")
execute_process(COMMAND "${KCHECK}" run "${CASE}" --jobs 1 --timeout 1800 RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "reference +1 ")
  message(FATAL_ERROR "the 2 GiB tensor case did not pass on every backend (exit ${rc})")
endif()
