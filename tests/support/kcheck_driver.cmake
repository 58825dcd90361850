# Shared by the cmake -P drivers that run kcheck end to end (tests/cli, tests/gen):
#   kcheck(want_rc args...)   runs ${KCHECK} args..., fails unless it exits want_rc,
#                             and leaves stdout + stderr in `out`;
#   expect_match(regex what)  fails with `what` unless `out` matches regex.
function(kcheck want_rc)
  execute_process(COMMAND "${KCHECK}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL want_rc)
    message(FATAL_ERROR "kcheck ${ARGN}: exit ${rc}, want ${want_rc}\n${out}${err}")
  endif()
  set(out "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect_match regex what)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${what}:\n${out}")
  endif()
endfunction()
